#!/usr/bin/env bash
# Runs the side-by-side benchmarks (ours and client-go's, same input, same
# run) and prints benchstat tables with one column per implementation. The
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
for round in $(seq "$count"); do
	echo "round $round of $count" >&2
	"$bin" -test.run '^$' -test.bench "$filter" -test.benchmem -test.count 1 -test.timeout 60m | tee -a "$out"
done
go run golang.org/x/perf/cmd/benchstat@latest -col /impl "$out"
