#!/usr/bin/env bash
# Runs the side-by-side benchmarks (ours and client-go's, same input, same
# run) and prints benchstat tables with one column per implementation, then
# the ratio ours / client-go of every round (scripts/rounds.awk). The
# figures in docs/benchmarks.md come from this script.
#
#   scripts/bench.sh                 # everything, 6 rounds
#   COUNT=3 scripts/bench.sh Queue   # a subset, fewer rounds
#
# Each round runs every selected benchmark once, ours next to client-go's,
# and the rounds are repeated: a machine whose speed drifts during the run
# (other load, a noisy neighbour) then slows both sides of a comparison
# alike, instead of all of one side's samples. Benchmarks are sensitive to
# other load all the same: run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../bench"
filter="${1:-.}"
count="${COUNT:-6}"
out="${OUT:-bench.txt}"
bin="$(mktemp -d)/bench.test"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" .
: >"$out"
# Before each round, the probe runs one small benchmark pinned to each of
# the first two CPUs. On a shared machine one CPU can be slowed for minutes
# while the other is not (we have seen 1.6x); a pipeline whose busy
# goroutines sit on one CPU then pays it all, one spread over both pays
# half. The probe shows such rounds (PROBE=0 turns it off).
probe="$out.probe"
: >"$probe"
probing() { [ "${PROBE:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; }
probe_cpu() {
	taskset -c "$1" "$bin" -test.run '^$' -test.bench 'Pipeline/handlers=1$/impl=floor$' -test.benchtime 1000000x |
		awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "cpu-ns/op") print $i }' || true
}
for round in $(seq "$count"); do
	echo "round $round of $count" >&2
	if probing; then
		echo "round $round cpu0 $(probe_cpu 0) cpu1 $(probe_cpu 1)" >>"$probe"
	fi
	"$bin" -test.run '^$' -test.bench "$filter" -test.benchmem -test.count 1 -test.timeout 60m | tee -a "$out"
done
go run golang.org/x/perf/cmd/benchstat@latest -col /impl "$out"
echo
awk -f ../scripts/rounds.awk "$probe" "$out"
