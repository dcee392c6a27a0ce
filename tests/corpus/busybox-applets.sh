# Busybox applets that make sense without a terminal or a network, run by
# `busybox sh busybox-applets.sh DIR` natively and in the guest: the output
# (names of applets and what they printed, never times, owners or inode
# numbers, sizes of directories) must be the same.  DIR is an empty
# writable directory.
cd "$1" || exit 1
t() { printf '== %s\n' "$*"; "$@" 2>&1; echo "rc $?"; }

seq 1 400 | awk '{ printf "line %d %s\n", $1, ($1 % 3 ? "fizz" : "buzz") }' > a.txt
printf 'pear\napple\nbanana\napple\ncherry\n' > f.txt
t wc a.txt f.txt
t md5sum a.txt
t sha256sum f.txt
t sha3sum f.txt
t sort f.txt
t uniq -c f.txt
t tail -2 a.txt
t rev f.txt
t cut -d' ' -f2,3 f.txt a.txt
t grep -c buzz a.txt
t grep -n -E '^line 1[0-2]?[05] ' a.txt
t sed -n 's/fizz/FIZZ/p;20q' a.txt
t awk '{ s += $2 } END { print s, NR }' a.txt
t tr a-z A-Z < f.txt
t od -A x -t x1 -c f.txt
t hexdump -C f.txt
t base64 f.txt
t expr 6 \* 7
t factor 360 97
t bc -l <<'E'
scale=20; 4*a(1)
2^100
E
t printf '%05d|%-6s|%x\n' 42 ab 255
t [ 3 -lt 2 ]
t cmp a.txt f.txt
t sh -c 'sort f.txt > s.txt; diff f.txt s.txt'
# Files and directories.
mkdir -p d/e/f
t cp a.txt d/e/f/copy.txt
t mv d/e/f/copy.txt d/e/moved.txt
t find d -type f
t ls -R d
t stat -c '%s %F' a.txt
t stat -c %F d
t truncate -s 100 d/e/moved.txt
t wc -c d/e/moved.txt
t dd if=a.txt of=dd.out bs=512 count=3 skip=1
t md5sum dd.out
t touch empty
t sh -c 'realpath d/e/../e/moved.txt | sed "s|^$PWD/||"'
t rm -r d
t ls
# Links, hard and symbolic, and a symbolic one through tar.
t ln -s f.txt soft
t ln a.txt hard
t readlink soft
t cat soft
t stat -c '%h %F %N' hard soft
t find . -type l
t sh -c 'mkdir x && tar cf l.tar soft f.txt && tar xf l.tar -C x && readlink x/soft && cat x/soft'
t rm -r soft hard l.tar x
# Archives and compressors.
t tar cf x.tar a.txt f.txt
t tar tf x.tar
t gzip -9 -k a.txt
t gzip -t a.txt.gz
t md5sum a.txt.gz
t zcat a.txt.gz | md5sum
t bzip2 -k f.txt
t bzcat f.txt.bz2
t sh -c 'ls a.txt f.txt | cpio -o -H newc > x.cpio; cpio -t < x.cpio'
# Processes, pipes, the shell.
t sh -c 'yes | head -1000 | wc -l'
t sh -c 'seq 10 | xargs -n 3 echo'
t sh -c 'echo $((7 * 6)); x=abc; echo ${#x} ${x%c}'
t sh -c 'for i in 1 2 3; do echo $i & done; wait' | sort
t sh -c 'f() { return 4; }; f; echo $?'
t sh -c '(exit 3); echo $?'
t sh -c 'echo out; echo err >&2' 2>&1
t sh -c 'read a b <<END
one two
END
echo $b $a'
t env -i FOO=bar env
t false
t id -u
