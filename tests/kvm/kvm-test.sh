#!/usr/bin/env bash
# The one runner of every KVM test: kvm-test.sh SCRIPT [ARGS...]
#
# The one skip rule lives here: without /dev/kvm the test reports skip (77)
# and does not run.  ./test never lets that pass: it gives the KVM tests a
# KVM (the host's, or QEMU's emulated SVM through scripts/qemu-svm.sh) and
# counts a skip as a failure.  A /dev/kvm that is there but unusable is a
# failure, not a skip.
set -uo pipefail
if [ ! -e /dev/kvm ]; then
	echo "SKIP: /dev/kvm is absent"
	exit 77
fi
if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
	echo "FAIL: /dev/kvm is not readable and writable by $(id -un)"
	exit 1
fi
exec bash "$@"
