#!/usr/bin/env bash
# Runs the side-by-side benchmarks (ours and client-go's, same input, same
# run) and prints benchstat tables with one column per implementation. The
# figures in docs/benchmarks.md come from this script.
#
#   scripts/bench.sh                 # everything, 6 runs each
#   COUNT=3 scripts/bench.sh Queue   # a subset, fewer runs
#
# Benchmarks are sensitive to other load: run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../bench"
filter="${1:-.}"
count="${COUNT:-6}"
out="${OUT:-bench.txt}"
go test -run '^$' -bench "$filter" -benchmem -count "$count" -timeout 60m . | tee "$out"
go run golang.org/x/perf/cmd/benchstat@latest -col /impl "$out"
