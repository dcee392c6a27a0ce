#!/usr/bin/env bash
# Host directories in the guest (vmm run --dir): tests/guest/treework.c
# natively and in the guest.
#
#   share.sh roundtrip VMM TREEWORK [VMM OPTIONS...]
#       an input tree read from a :ro share, results written under a :rw
#       one: the output tree equals the native run's byte for byte, the
#       same stdout, the input untouched
#   share.sh kill|timeout|vmmkill VMM TREEWORK
#   share.sh panic VMM TREEWORK KPANIC_KERNEL
#       the file written before SIGKILL, --timeout, a guest kernel panic,
#       or a SIGKILL of the VMM itself holds its bytes on the host
#       afterwards
#   share.sh erofs VMM TREEWORK
#       every change to a :ro share is EROFS; the host tree is unchanged
#   share.sh escape VMM TREEWORK
#       the ways out of a share fail (.., absolute and relative symbolic
#       links, /proc/self/root, a FIFO, a bind mount when we may make one,
#       huge and negative offsets) and links swapped by the host while
#       the guest looks them up never lead out
set -uo pipefail
case=$1 vmm=$2 prog=$3
shift 3
tmp=$(mktemp -d)
mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	[ -n "${swapper:-}" ] && kill "$swapper" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

# A tree with the sizes that matter: empty, one byte, a page and one
# more, several MiB (more than one 2 MiB guest page), nested and empty
# directories, a space in a name, a mode that is not 644.
make_tree() {
	mkdir -p "$1/a/b" "$1/empty" "$1/c"
	: >"$1/zero"
	head -c 1 /dev/urandom >"$1/one"
	head -c 4096 /dev/urandom >"$1/a/page"
	head -c 4097 /dev/urandom >"$1/a/b/page1"
	head -c 5242893 /dev/urandom >"$1/a/big"
	seq 1 20000 >"$1/c/lines"
	echo text >"$1/with space"
	chmod 600 "$1/one"
}

tree_sum() {
	(cd "$1" && find . -printf '%p %y %s %m\n' | sort &&
	 find . -type f -print0 | sort -z | xargs -0 sha256sum)
}

# The file $1 must hold exactly the line $2.
check_bytes() {
	[ -f "$1" ] || { say "$1 is not on the host"; return; }
	[ "$(cat "$1")" = "$2" ] || say "$1 holds '$(head -c 100 "$1")', want '$2'"
}

run_vm() {
	timeout -k 5 300 "$vmm" run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
}

case $case in
roundtrip)
	make_tree "$tmp/in"
	mkdir "$tmp/native" "$tmp/guest"
	before=$(tree_sum "$tmp/in")
	"$prog" process "$tmp/in" "$tmp/native" >"$tmp/native.out" 2>&1
	run_vm "$@" --dir "$tmp/in:/data/in:ro" --dir "$tmp/guest:/data/out:rw" \
		-- "$prog" process /data/in /data/out
	[ "$status" = 0 ] || say "exit status $status: $(cat "$tmp/out" "$tmp/err")"
	grep -qx "files 7 bytes 5359986" "$tmp/native.out" ||
		say "native run: $(cat "$tmp/native.out")"
	cmp -s "$tmp/native.out" "$tmp/out" ||
		say "stdout differs from native: $(diff "$tmp/native.out" "$tmp/out")"
	[ "$(wc -l <"$tmp/guest/manifest")" = 7 ] || say "manifest: $(cat "$tmp/guest/manifest")"
	diff -r "$tmp/native" "$tmp/guest" >"$tmp/diff" ||
		say "output trees differ: $(head -20 "$tmp/diff")"
	[ "$(tree_sum "$tmp/native")" = "$(tree_sum "$tmp/guest")" ] ||
		say "output trees differ in names, sizes or modes"
	[ "$(tree_sum "$tmp/in")" = "$before" ] || say "the :ro input changed"
	;;
kill)
	run_vm --dir "$tmp:/out:rw" -- "$prog" kill /out
	[ "$status" = 137 ] || say "exit status $status, want 137 (SIGKILL)"
	check_bytes "$tmp/killed" "written before SIGKILL"
	;;
timeout)
	run_vm --timeout 2 --dir "$tmp:/out:rw" -- "$prog" spin /out
	[ "$status" = 124 ] || say "exit status $status, want 124 (timeout)"
	check_bytes "$tmp/timeout" "written before the timeout"
	;;
vmmkill)
	# The VMM itself SIGKILLed while the program spins after its write.
	"$vmm" run --dir "$tmp:/out:rw" -- "$prog" spin /out >"$tmp/out" \
		2>"$tmp/err" </dev/null &
	pid=$!
	for _ in $(seq 600); do
		grep -q wrote "$tmp/out" && break
		sleep 0.1
	done
	kill -KILL "$pid"
	wait "$pid"
	status=$?
	[ "$status" = 137 ] || say "exit status $status, want 137 (SIGKILL)"
	check_bytes "$tmp/timeout" "written before the timeout"
	;;
panic)
	run_vm --kernel "$1" --dir "$tmp:/out:rw" -- "$prog" panic /out
	[ "$status" = 125 ] || say "exit status $status, want 125 (panic)"
	grep -q '^vmm: guest kernel panic.*deliberate' "$tmp/err" ||
		say "no panic on stderr: $(head -3 "$tmp/err")"
	grep -qx 'wrote panic' "$tmp/out" || say "the program did not write"
	check_bytes "$tmp/panic" "written before the panic"
	;;
erofs)
	mkdir -p "$tmp/ro/sub"
	echo keep >"$tmp/ro/existing"
	before=$(tree_sum "$tmp/ro")
	run_vm --dir "$tmp/ro:/r" -- "$prog" erofs /r
	printf '%s: EROFS\n' create open-write open-trunc truncate mkdir unlink \
		rmdir rename >"$tmp/want"
	echo "still readable: yes" >>"$tmp/want"
	[ "$status" = 0 ] || say "exit status $status"
	cmp -s "$tmp/want" "$tmp/out" || say "stdout: $(diff "$tmp/want" "$tmp/out")"
	[ "$(tree_sum "$tmp/ro")" = "$before" ] || say "the :ro share changed"
	;;
escape)
	s=$tmp/share out=$tmp/outside
	mkdir -p "$s/sub" "$s/inner" "$s/race" "$s/rw" "$out" "$s/mnt"
	echo SECRET >"$tmp/secret"
	echo SECRET >"$out/secret"
	echo inside >"$s/inner/secret"
	echo data >"$s/rw/file"
	ln -s "$tmp/secret" "$s/abs"
	ln -s ../secret "$s/rel"
	ln -s ../../secret "$s/sub/x"
	ln -s sub/x "$s/relsub"
	ln -s "/proc/self/root$tmp/secret" "$s/procroot"
	ln -s /proc/self/fd/0 "$s/procfd"
	ln -s "$out" "$s/absdir"
	ln -s ../.. "$s/reldir"
	ln -s loop "$s/loop"
	mkfifo "$s/fifo"
	mnt_want=ENOENT
	if mount --bind "$out" "$s/mnt" 2>/dev/null; then
		mnt=$s/mnt mnt_want=EXDEV
	fi
	n=400
	for i in $(seq 0 $((n - 1))); do ln -s "$out" "$s/race/l$i"; done
	# Swap each link between inside and outside while the guest looks.
	(
		while :; do
			for i in $(seq 0 $((n - 1))); do
				ln -sfn ../inner "$s/race/t$i" &&
					mv -T "$s/race/t$i" "$s/race/l$i"
				ln -sfn "$out" "$s/race/t$i" &&
					mv -T "$s/race/t$i" "$s/race/l$i"
			done
		done
	) 2>/dev/null &
	swapper=$!
	before=$(tree_sum "$tmp/outside")
	run_vm --dir "$s:/s:rw" -- "$prog" escape /s $n
	kill "$swapper" 2>/dev/null
	wait "$swapper" 2>/dev/null
	swapper=
	cat >"$tmp/want" <<-EOF
	../secret: ENOENT
	../../secret: ENOENT
	sub/../../secret: ENOENT
	abs: ENOENT
	rel: ENOENT
	relsub: ENOENT
	procroot: ENOENT
	procfd: ENOENT
	abs/../secret: ENOENT
	absdir/secret: ENOENT
	reldir/secret: ENOENT
	loop: ELOOP
	fifo: EACCES
	mnt/secret: $mnt_want
	pread -1: EINVAL
	pread 2^62: 0
	pwrite 2^63-8: error
	pwrite 2^62: error
	lseek -5: EINVAL
	ftruncate -1: EINVAL
	race: 0 escaped
	EOF
	[ "$status" = 0 ] || say "exit status $status: $(head -3 "$tmp/err")"
	cmp -s "$tmp/want" "$tmp/out" || say "stdout: $(diff "$tmp/want" "$tmp/out")"
	[ "$(tree_sum "$tmp/outside")" = "$before" ] || say "outside changed"
	[ "$(cat "$s/rw/file")" = data ] || say "rw/file changed"
	[ "$(stat -c %s "$s/rw/file")" = 5 ] || say "rw/file grew"
	;;
*)
	echo "share.sh: unknown case $case" >&2
	exit 2
	;;
esac
[ "$fail" = 0 ] && echo "ok: share $case"
exit $fail
