#!/usr/bin/env bash
# corrupt-elf.sh GOOD_ELF OUTDIR PREFIX: write corrupted copies of an ELF
# file, one per way a file can be broken, as OUTDIR/PREFIX-NAME.
set -euo pipefail
src=$1 out=$2 pre=$3
mkdir -p "$out"

# poke FILE OFFSET HEXBYTES: overwrite bytes in place.
poke() {
	printf "$(echo "$3" | sed 's/../\\x&/g')" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
mk() {
	cp "$src" "$out/$pre-$1"
	chmod u+w "$out/$pre-$1"
	echo "$out/$pre-$1"
}

: >"$out/$pre-empty"
head -c 3 "$src" >"$out/$pre-magic-only"
head -c 64 "$src" >"$out/$pre-header-only"
size=$(stat -c %s "$src")
head -c $((size / 2)) "$src" >"$out/$pre-half"
f=$(mk class32); poke "$f" 4 01			# EI_CLASS = ELFCLASS32
f=$(mk bigendian); poke "$f" 5 02		# EI_DATA = ELFDATA2MSB
f=$(mk i386); poke "$f" 18 0300			# e_machine = EM_386
f=$(mk reloc); poke "$f" 16 0100		# e_type = ET_REL
f=$(mk core); poke "$f" 16 0400			# e_type = ET_CORE
f=$(mk phoff-huge); poke "$f" 32 f0ffffffffffff7f	# e_phoff
f=$(mk phnum-huge); poke "$f" 56 ffff		# e_phnum
f=$(mk phnum-zero); poke "$f" 56 0000
f=$(mk phentsize); poke "$f" 54 1000		# e_phentsize = 16
f=$(mk entry-wild); poke "$f" 24 0000000000000080	# e_entry
# First program header (at e_phoff, 64 in both our linkers' output):
# p_offset past the end of the file, p_filesz huge, p_memsz wrapping.
phoff=$(od -An -t u8 -j 32 -N 8 "$src" | tr -d ' ')
f=$(mk seg-offset); poke "$f" $((phoff + 8)) 00000000ffff0000
f=$(mk seg-filesz); poke "$f" $((phoff + 32)) 00000000ffff0000
f=$(mk seg-wrap); poke "$f" $((phoff + 40)) f0ffffffffffffff
f=$(mk seg-align); poke "$f" $((phoff + 48)) 0300000000000000
