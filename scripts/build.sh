#!/usr/bin/env bash
# Configure and build one build directory: build.sh DIR [meson args]
# Quiet when it works; on failure the whole output, compiler errors first.
# The directory is set up again from scratch when the meson args or $CC
# differ from last time: meson's --reconfigure and --wipe both keep options
# given before, so an option left out would not go back to its default.
set -euo pipefail
dir=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
stamp=$dir/.build-sh-args
want=$(printf '%s\n' "CC=${CC:-}" --werror "$@")
if [ -f "$dir/meson-private/coredata.dat" ] &&
   [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	rm -rf "$dir"	# only ever a meson build directory (checked above)
fi
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" --werror "$@" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	printf '%s\n' "$want" >"$stamp"
fi
if ! ninja -C "$dir" >"$log" 2>&1; then
	# Compiler errors first, then everything ninja said.
	grep -E 'error|FAILED' "$log" >&2 || true
	echo "---- full output ----" >&2
	cat "$log" >&2
	exit 1
fi
