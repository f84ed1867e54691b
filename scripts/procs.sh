#!/usr/bin/env bash
# Runs the one-handler pipeline benchmark with GOMAXPROCS=1 and then 2, for
# ours, client-go's and the floor, interleaved round by round, and prints the
# CPU per event of each, then the medians. It shows what an idle second
# processor costs each pipeline: the Go runtime wakes a thread to look for
# work whenever a goroutine becomes runnable while a processor is idle (see
# docs/benchmarks.md, "Why one handler misses it").
#
#   scripts/procs.sh                 # 4 rounds of 600,000 events
#   PIN=1 ROUNDS=6 scripts/procs.sh  # every run pinned to CPU 1
#
# PIN runs both settings on the same CPU, so that what differs between them
# is the runtime's work, not a second CPU's cache or speed.
set -euo pipefail
cd "$(dirname "$0")/../bench"
rounds="${ROUNDS:-4}"
events="${EVENTS:-600000}"
bin="$(mktemp -d)/bench.test"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" .
pin=()
if [ -n "${PIN:-}" ]; then
	pin=(taskset -c "$PIN")
fi
# cpu prints the CPU per event of one run: cpu IMPL PROCS.
cpu() {
	env GOMAXPROCS="$2" "${pin[@]}" "$bin" -test.run '^$' -test.benchtime "${events}x" \
		-test.bench "Pipeline/handlers=1\$/impl=$1\$" |
		awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "cpu-ns/op") print $i }'
}
for round in $(seq "$rounds"); do
	line="round $round:"
	for impl in informer client-go floor; do
		line="$line $impl $(cpu "$impl" 1) $(cpu "$impl" 2)"
	done
	echo "$line"
done | awk '
	{ print; for (i = 3; i <= NF; i += 3) { v[$i, 1, NR] = $(i + 1); v[$i, 2, NR] = $(i + 2) } }
	# median sorts by insertion (plain awk has no sort) and takes the middle.
	function median(impl, p,    a, i, j, x, n) {
		n = NR
		for (i = 1; i <= n; i++) {
			x = v[impl, p, i] + 0
			for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
			a[j + 1] = x
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		print "\ncpu-ns/event, median of " NR " rounds    GOMAXPROCS=1   GOMAXPROCS=2   2 / 1"
		split("informer client-go floor", impls, " ")
		for (k = 1; k <= 3; k++) {
			m1 = median(impls[k], 1); m2 = median(impls[k], 2)
			printf "%-38s %12.0f   %12.0f   %5.2f\n", impls[k], m1, m2, m2 / m1
		}
		printf "%-38s %12.2f   %12.2f\n", "ours / client-go", median("informer", 1) / median("client-go", 1), median("informer", 2) / median("client-go", 2)
	}'
