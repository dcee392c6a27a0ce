#!/usr/bin/env bash
# Configure (once) and build one build directory: build.sh DIR [meson args]
set -euo pipefail
dir=$1
shift
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" --werror "$@" >/dev/null
fi
ninja -C "$dir" >/dev/null
