#!/usr/bin/env bash
# Run a command on a standard AMD SVM KVM host emulated by QEMU (TCG).
#
#   qemu-svm.sh [--cpus N] [--mem SIZE] [--timeout S] [--rw DIR]... [--env K=V]... -- CMD...
#   qemu-svm.sh --prepare      fetch Debian's kernel and build the initramfs, then exit
#
# QEMU's software CPU emulates SVM, so Debian's kernel inside it loads kvm_amd
# and offers /dev/kvm: the same KVM a user on an AMD host has.  The host's /
# is shared read-only over 9p and the current directory and every --rw DIR
# read-write, so CMD runs inside by the same paths with the caller's
# environment; /tmp there is the emulated machine's own (tmpfs: programs
# mmap files there, which 9p cannot share).  CMD's stdout and stderr come out here as it writes them and
# its exit status is ours; 124 means --timeout ran out, 125 that the harness
# itself failed (the console log's tail then goes to stderr).
set -euo pipefail

cpus=1
mem=4G
timeout=3600
rw=()
envs=()
prepare=false
die() { echo "qemu-svm: $*" >&2; exit 125; }
usage() { sed -n '4,5p' "$0" | sed 's/^#  //' >&2; exit 125; }

while [ $# -gt 0 ]; do
	case $1 in
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--rw) rw+=("$(realpath "$2")") || die "no such directory: $2"; shift 2 ;;
	--env) envs+=("$2"); shift 2 ;;
	--prepare) prepare=true; shift ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
$prepare || [ $# -gt 0 ] || usage

cache=${PERFVISOR_SVM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfvisor-svm}
# Loaded in this order; kvm_amd last, with nested=0 (no SVM for our guest).
modules=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
	 9pnet 9pnet_virtio netfs fscache 9p irqbypass kvm ccp kvm-amd)

# Debian's current amd64 kernel, unpacked once into the cache.
kernel_fetch() {
	local pkg ver
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$pkg" ] || die "apt-cache knows no linux-image-amd64 (apt-get update?)"
	if [ ! -f "$cache/kernel/$pkg.done" ]; then
		echo "qemu-svm: fetching $pkg" >&2
		rm -rf "$cache/kernel" && mkdir -p "$cache/kernel/deb"
		(cd "$cache/kernel/deb" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
			die "apt-get download $pkg failed"
		dpkg-deb -x "$cache"/kernel/deb/*.deb "$cache/kernel/root" ||
			die "cannot unpack $pkg"
		rm -rf "$cache/kernel/deb"
		touch "$cache/kernel/$pkg.done"
	fi
	ver=${pkg#linux-image-}
	kernel=$cache/kernel/root/boot/vmlinuz-$ver
	moddir=$cache/kernel/root/lib/modules/$ver
	[ -f "$kernel" ] || die "no $kernel"
}

# The initramfs: static busybox, the modules and /init; rebuilt when this
# script changes.
initramfs_build() {
	local stamp tree m f
	stamp=$(sha256sum "$0" | cut -c1-16)
	initrd=$cache/initrd-$stamp.cpio
	[ -f "$initrd" ] && return
	[ -x /bin/busybox ] || die "needs busybox-static (/bin/busybox)"
	tree=$(mktemp -d)
	mkdir -p "$tree"/{bin,dev,proc,sys,mod,host,run}
	cp /bin/busybox "$tree/bin/busybox"
	for m in "${modules[@]}"; do
		f=$(find "$moddir" -name "$m.ko*" -o -name "${m//-/_}.ko*" | head -1)
		if [ -z "$f" ]; then
			grep -qE "/(${m}|${m//-/_})\.ko" "$moddir/modules.builtin" ||
				die "kernel has no module $m"
			continue
		fi
		case $f in
		*.xz) xz -dc "$f" >"$tree/mod/$m.ko" ;;
		*.zst) zstd -qdc "$f" >"$tree/mod/$m.ko" ;;
		*) cp "$f" "$tree/mod/$m.ko" ;;
		esac
		echo "$m" >>"$tree/mod/order"
	done
	initscript_write >"$tree/init"
	chmod +x "$tree/init"
	rm -f "$cache"/initrd-*.cpio
	(cd "$tree" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$tree"
}

# /init of the emulated machine: load KVM, mount the shares, run the command
# the run directory holds, power off.  Any failure ends in poweroff too, so
# QEMU exits and the missing status file tells the caller.
initscript_write() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /mod/order); do
	args=
	[ "$m" = kvm-amd ] && args=nested=0
	insmod /mod/$m.ko $args || echo "qemu-svm: insmod $m failed"
done
o=trans=virtio,version=9p2000.L,msize=524288
mount -t 9p -o $o,cache=none run /run &&
mount -t 9p -o $o,ro hostroot /host &&
mount -t tmpfs -o mode=1777 tmpfs /host/tmp &&
mount -t tmpfs tmpfs /host/run &&
mkdir /host/run/qemu-svm &&
mount -o bind /run /host/run/qemu-svm &&
. /run/mounts &&
mount -t proc proc /host/proc &&
mount -t sysfs sysfs /host/sys &&
mount -t devtmpfs devtmpfs /host/dev &&
mkdir -p /host/dev/shm /host/dev/pts &&
mount -t tmpfs tmpfs /host/dev/shm &&
mount -t devpts devpts /host/dev/pts || echo "qemu-svm: mounts failed"
# devtmpfs lacks what udev would add: /dev/fd and the std streams.
ln -s /proc/self/fd /host/dev/fd
ln -s /proc/self/fd/0 /host/dev/stdin
ln -s /proc/self/fd/1 /host/dev/stdout
ln -s /proc/self/fd/2 /host/dev/stderr
if [ -c /dev/kvm ]; then
	chroot /host /bin/bash /run/qemu-svm/cmd
else
	echo "qemu-svm: kvm_amd offers no /dev/kvm" >/run/error
fi
sync
poweroff -f
EOF
}

# QEMU 7.2's TCG, emulating SVM while the nested guest single-steps, now
# and then leaves an interrupt in the emulated kernel's APIC IRR undelivered
# (seen: halted for good in idle, IF=1, timer vector in IRR, every timeout
# pending; any new interrupt, a keypress, woke it).  So that kernel ticks
# from the HPET, periodically (nolapic_timer nohz=off highres=off): the
# next tick delivers whatever was left.  One CPU each, too: with two, both
# were once found spinning with interrupts off; several machines side by
# side give the parallelism.
cpu_model=${QEMU_SVM_CPU:-max,-tsc-deadline}

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
kernel_fetch
initramfs_build
flock -u 9
$prepare && exit 0

command -v qemu-system-x86_64 >/dev/null || die "needs qemu-system-x86"
run=$(mktemp -d /tmp/qemu-svm.XXXXXX)
qpid=
trap 'kill $qpid 2>/dev/null || true; rm -rf "$run"' EXIT
trap 'exit 143' TERM INT
: >"$run/stdout"
: >"$run/stderr"

# Shares: the run directory, / read-only, then the current directory and
# each --rw DIR read-write on top (a directory inside another is covered).
shares=(-virtfs "local,path=$run,mount_tag=run,security_model=none"
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")
n=0
: >"$run/mounts"
for d in "$PWD" "${rw[@]}"; do
	[ "$d" = / ] && die "--rw / is not allowed"
	covered=false
	for c in "$PWD" "${rw[@]}"; do
		[ "$c" != "$d" ] && [[ $d == "$c"/* ]] && covered=true
	done
	grep -qxF "# $d" "$run/mounts" && covered=true
	$covered && continue
	shares+=(-virtfs "local,path=$d,mount_tag=rw$n,security_model=none,multidevs=remap")
	printf '# %s\nmkdir -p %q && mount -t 9p -o $o rw%d %q &&\n' \
		"$d" "/host$d" "$n" "/host$d" >>"$run/mounts"
	n=$((n + 1))
done
echo true >>"$run/mounts"

# The command, with the caller's environment and directory.
{
	export -p | grep -vE '^declare -x (PWD|OLDPWD|SHLVL|_)='
	# Tests whose subject is hardware timing scale to the emulator.
	echo 'export PERFVISOR_EMULATED_KVM=1'
	for e in "${envs[@]}"; do printf 'export %q\n' "$e"; done
	printf 'cd %q || exit 125\n' "$PWD"
	printf '%q ' "$@"
	echo '>/run/qemu-svm/stdout 2>/run/qemu-svm/stderr </dev/null'
	echo 'echo $? >/run/qemu-svm/status'
} >"$run/cmd"

# Stream CMD's output while it runs; tail --pid prints what is left and ends
# when QEMU does.
timeout -k 10 "$timeout" qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu "$cpu_model" -smp "$cpus" -m "$mem" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=4 panic=-1 mitigations=off tsc=reliable sysrq_always_enabled nokaslr \
		nolapic_timer nohz=off highres=off" \
	"${shares[@]}" -nic none -display none -no-reboot \
	-monitor "unix:$run/monitor,server=on,wait=off" \
	-serial "file:$run/console" </dev/null >/dev/null 2>"$run/qemu-err" &
qpid=$!
tail -q -n +1 -f --pid=$qpid "$run/stdout" &
tout=$!
tail -q -n +1 -f --pid=$qpid "$run/stderr" >&2 &
terr=$!
rc=0
wait $qpid || rc=$?
wait $tout $terr || true
if [ $rc -eq 124 ]; then
	echo "qemu-svm: timed out after ${timeout}s" >&2
	exit 124
fi
if [ ! -s "$run/status" ]; then
	cat "$run/error" "$run/qemu-err" 2>/dev/null >&2 || true
	echo "qemu-svm: no exit status (QEMU status $rc); console tail:" >&2
	tail -n 20 "$run/console" >&2 || true
	exit 125
fi
exit "$(cat "$run/status")"
