#!/usr/bin/env bash
# Debian's own dynamically linked programs in the guest, from a read-only
# share of the host's / (ld.so, libc and every library come from it),
# against the same command run natively: stdout, exit status and, where
# the program writes a file, the file, byte for byte.
#
#   dynamic.sh VMM CASE
#
# Inputs are made in a fresh host directory, shared read-write at the
# same path with --cwd there, so both runs see the same relative paths.
# Run through kvm-test.sh.  A program missing on the host is a failure
# (./test installs them).
set -uo pipefail
vmm=$1 case=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
say() { echo "FAIL: $*"; fail=1; }

seq 1 30000 >"$work/input.txt"
mkdir "$work/native" "$work/guest"

# compare NAME OUTFILE|- COMMAND...: run in native/ and guest/ (cwd), the
# program by its absolute path (from the share in the guest).
compare() {
	local name=$1 outfile=$2
	shift 2
	[ -x "$1" ] || { say "$name: $1 is not installed"; return; }
	(cd "$work/native" && env -i PATH=/usr/bin:/bin LC_ALL=C timeout 120 \
		"$@" >"$work/native.out" 2>"$work/native.err" </dev/null)
	local ns=$?
	timeout -k 5 300 "$vmm" run --dir /:/:ro --dir "$work:$work:rw" \
		--cwd "$work/guest" --env PATH=/usr/bin:/bin --env LC_ALL=C \
		-- "$@" >"$work/guest.out" 2>"$work/guest.err" </dev/null
	local gs=$?
	[ "$ns" = "$gs" ] || say "$name: exit status $gs in the guest, $ns natively"
	cmp -s "$work/native.out" "$work/guest.out" ||
		{ say "$name: stdout differs from native"; diff "$work/native.out" "$work/guest.out" | head -10; }
	if [ "$outfile" != - ]; then
		[ -s "$work/native/$outfile" ] || say "$name: no $outfile natively"
		cmp -s "$work/native/$outfile" "$work/guest/$outfile" ||
			say "$name: $outfile differs from native"
	fi
	if [ $fail = 1 ]; then
		echo "--- command: $*"
		echo "--- guest stderr:"; head -c 2000 "$work/guest.err"
	else
		echo "ok: $name (status $gs, $(wc -c <"$work/guest.out") bytes)"
	fi
}

case $case in
basic)
	compare true - /usr/bin/true
	compare false - /usr/bin/false
	compare echo - /bin/echo dynamically linked
	# fork and execve of dynamic programs inside the guest
	compare dash-pipeline - /usr/bin/dash -c \
		'/usr/bin/echo abc | /usr/bin/tr a-c x-z; /usr/bin/sort -rn ../input.txt | /usr/bin/head -3; exit 4'
	;;
gzip)
	compare gzip-compress - /usr/bin/gzip -n -9 -c ../input.txt
	gzip -n -c "$work/input.txt" >"$work/input.gz"
	compare gzip-decompress - /usr/bin/gzip -d -c ../input.gz
	;;
xz)
	# liblzma's multithreaded encoder at preset 6, two threads
	compare xz-mt - /usr/bin/xz -T2 -6 -c ../input.txt
	xz -c "$work/input.txt" >"$work/input.xz"
	compare xz-decompress - /usr/bin/xz -d -c ../input.xz
	;;
lua)
	compare lua - /usr/bin/lua5.4 -e '
		local t = {}
		for i = 1, 100000 do t[i] = i * i end
		local s = 0
		for _, v in ipairs(t) do s = s + v % 7 end
		local f = assert(io.open("../input.txt"))
		local n = 0
		for _ in f:lines() do n = n + 1 end
		print(s, n, string.format("%.3f", math.sqrt(2)))
		local o = assert(io.open("out.txt", "w"))
		o:write(table.concat(t, ",", 1, 50), "\n")
		o:close()
		os.exit(5)'
	compare lua-file out.txt /usr/bin/lua5.4 -e '
		local o = assert(io.open("out.txt", "w"))
		for i = 1, 1000 do o:write(i, " ", i * 3, "\n") end
		o:close()'
	;;
sqlite3)
	compare sqlite3 - /usr/bin/sqlite3 test.db '
		create table t(a integer, b text);
		with recursive c(x) as (select 1 union all select x + 1 from c where x < 20000)
		insert into t select x, printf("row%06d", (x * 7919) % 20000) from c;
		create index tb on t(b);
		select count(*), sum(a), min(b), max(b) from t;
		select a from t where b = "row000123";'
	compare sqlite3-reopen - /usr/bin/sqlite3 test.db \
		'select count(*) from t; pragma integrity_check;'
	;;
python3)
	compare python3 result.json /usr/bin/python3 -c '
import hashlib, json, re, threading
data = open("../input.txt").read()
words = re.findall(r"\d*7\d*", data)
out = {}
def work(k):
    out[k] = hashlib.sha256((data * k).encode()).hexdigest()
ts = [threading.Thread(target=work, args=(k,)) for k in (1, 2, 3)]
for t in ts: t.start()
for t in ts: t.join()
with open("result.json", "w") as f:
    json.dump({"sevens": len(words), "hashes": out}, f, sort_keys=True)
print(len(words), out[1][:16])
raise SystemExit(6)'
	;;
python3-pool)
	# multiprocessing: worker processes fed by pipes, and the SemLocks
	# glibc's sem_open() makes in /dev/shm by link()
	compare python3-pool result.txt /usr/bin/python3 -c '
import multiprocessing as mp
def square(n):
    return n * n
if __name__ == "__main__":
    with mp.Pool(2) as p:
        r = p.map(square, range(1000), chunksize=50)
    with open("result.txt", "w") as f:
        f.write("%d %d\n" % (len(r), sum(r)))
    print(sum(r))'
	;;
python3-venv)
	# venv's symbolic links (bin/python3 -> /usr/bin/python3, python ->
	# python3), made in the guest's own /tmp, then its python run
	# through them: it finds pyvenv.cfg by the path it was started by.
	compare python3-venv - /bin/sh -c '
d=$(mktemp -d) || exit 1
/usr/bin/python3 -m venv --without-pip "$d/v" || exit 2
cd "$d/v/bin" && ls && readlink python3 python && test -L python || exit 3
./python -c "import sys, os; print(sys.prefix != sys.base_prefix, os.path.basename(sys.prefix), os.path.islink(sys.executable), sys.base_prefix)"
s=$?
cd / && rm -rf "$d"
exit $s'
	# Equal is not enough: the venv must have run (natively, and so in
	# the guest).
	grep -q '^True v True ' "$work/native.out" ||
		say "python3-venv: no venv ran natively ($(tail -c 200 "$work/native.err"))"
	;;
perl)
	compare perl - /usr/bin/perl -e '
		open(my $f, "<", "../input.txt") or die;
		my ($n, $s) = (0, 0);
		while (<$f>) { $n++; $s += $_ if /3/ }
		printf("%d %d %s\n", $n, $s, join(",", sort { $b <=> $a } 1..5));'
	;;
*)
	echo "dynamic.sh: unknown case $case" >&2
	exit 2
	;;
esac
exit $fail
