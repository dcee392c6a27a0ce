#!/usr/bin/env bash
# Configure (once) and build one build directory: build.sh DIR [meson args]
# Quiet when it works; on failure the whole output, compiler errors first.
set -euo pipefail
dir=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" --werror "$@" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
fi
ninja -C "$dir" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
