#!/usr/bin/env bash
# Install the Debian packages perfvisor needs, only those missing; quiet.
set -euo pipefail

pkgs=(meson ninja-build gcc clang pkg-config libelf-dev libcmocka-dev
      musl-tools busybox-static gnuplot-nox valgrind linux-perf
      qemu-system-x86
      # the compatibility corpus (tests/corpus): Debian's static libraries
      libsqlite3-dev liblua5.4-dev zlib1g-dev libbz2-dev liblzma-dev
      libzstd-dev libssl-dev
      # Debian's own dynamically linked programs (tests/kvm/dynamic.sh)
      lua5.4 sqlite3 python3 python3-venv xz-utils
      # PAPI's own test suite and libpfm4's examples (tests/papi)
      libpapi-dev libpfm4-dev papi-examples)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "installing: ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
