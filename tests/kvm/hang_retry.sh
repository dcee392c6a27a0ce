# Sourced by KVM test scripts: hang_retry OUT ERR COMMAND...
#
# Runs COMMAND (a `vmm` with --timeout) with stdout and stderr in files OUT
# and ERR, and once more if it timed out (status 124), saying so on
# stderr: one CI run of the clang build hung in vpmu-monotonic-2cpu
# (status 124) and it has not reproduced in over a hundred runs since.
# Only a hang is retried, never a wrong count:
# the caller checks the output of the run that finished.  Returns the
# last run's status.
hang_retry() {
	local out=$1 err=$2 try r
	shift 2
	for try in 1 2; do
		"$@" >"$out" 2>"$err"
		r=$?
		[ $r = 124 ] || break
		echo "KNOWN: hang (try $try), vCPU state:" >&2
		grep -v "kvm " "$err" | tail -12 >&2
	done
	return $r
}
