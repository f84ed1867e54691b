# rounds.awk prints, for every side-by-side benchmark in a scripts/bench.sh
# output, the ratio ours / client-go of each round: what benchstat's
# medians hide. A median under a target can come from rounds that all meet
# it or from rounds of which some miss it; the per-round line tells which.
#
#   awk -f scripts/rounds.awk [PROBE_FILE] BENCH_OUTPUT
#
# The ratio is of cpu-ns/op where a benchmark reports it (the CPU the whole
# process used per op, which is what the targets are about), of ns/op
# otherwise. A round is one run of the test binary: it starts at a "goos:"
# line.
#
# PROBE_FILE, if given, holds one line per round, "round N cpu0 X cpu1 Y":
# the same small benchmark run pinned to each CPU before the round (see
# scripts/bench.sh). When the two differ, the machine was not the same
# machine for every goroutine during that round; the line shows it next
# to the ratios, and the rounds are then summed up in two groups: those
# where the two CPUs were even (the probe within 5%), and the others. With
# several runs, give each run's probe file before its output:
#
#   awk -f scripts/rounds.awk run1.probe run1.txt run2.probe run2.txt ...
#
# and the rounds of all the runs are numbered on, and summed up, together.
# The sums count the rounds over a target ratio, 0.5 unless -v target=X
# says otherwise (0.5 is issue 5's target for the pipeline's CPU).

# A probe line (only the probe files have them). A probe file's rounds
# follow on from those of the outputs read before it. A probe that printed
# nothing for a CPU leaves its round out of both groups.
/^round [0-9]+ cpu0 / {
	if (FNR == 1) base = round
	r = base + $2
	probes++
	if ($5 != "cpu1" || $4 + 0 <= 0 || $6 + 0 <= 0) {
		probe[r] = "probe failed: " $0
		next
	}
	skew[r] = $4 / $6
	probe[r] = sprintf("cpu0 %s cpu1 %s (%.2fx)", $4, $6, skew[r])
	next
}

/^goos:/ { round++ }

/^Benchmark.*\/impl=/ {
	name = $1
	sub(/-[0-9]+$/, "", name) # GOMAXPROCS suffix
	impl = name
	sub(/.*\/impl=/, "", impl)
	sub(/\/impl=[^\/]*$/, "", name)
	sub(/^Benchmark/, "", name)
	v = ""
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "cpu-ns/op") { v = $i; break }
		if ($(i + 1) == "ns/op" && v == "") v = $i
	}
	value[name, impl, round] = v
	if (!(name in seen)) { seen[name] = 1; names[++n] = name }
	rounds = round > rounds ? round : rounds
}

BEGIN { if (target == "") target = 0.5 }

# even reports whether round r had a probe that read both CPUs within 5% of
# each other: a round where every goroutine ran on the same machine.
function even(r) { return (r in skew) && skew[r] >= 1 / 1.05 && skew[r] <= 1.05 }

# summary describes the ratios in list (count of them, space-separated):
# how many, how many over the target, the median and the range.
function summary(list, count,    a, i, j, t, over, med) {
	if (count == 0) return "0 rounds"
	split(substr(list, 2), a, " ")
	for (i = 2; i <= count; i++) # insertion sort, count is small
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	over = 0
	for (i = 1; i <= count; i++) if (a[i] + 0 > target) over++
	med = count % 2 ? a[(count + 1) / 2] : (a[count / 2] + a[count / 2 + 1]) / 2
	return sprintf("%d rounds, %d over %s, median %.2f, %s to %s", count, over, target, med, a[1], a[count])
}

END {
	for (k = 1; k <= n; k++) {
		name = names[k]
		line = evens = odds = ""
		count = nevens = nodds = 0
		for (r = 1; r <= rounds; r++) {
			ours = value[name, "informer", r]
			theirs = value[name, "client-go", r]
			if (ours == "" || theirs == "" || theirs == 0) continue
			ratio = sprintf("%.2f", ours / theirs)
			line = line " " ratio
			count++
			if (even(r)) { evens = evens " " ratio; nevens++ }
			else if (r in skew) { odds = odds " " ratio; nodds++ }
		}
		if (count == 0) continue
		printf "%-40s ours/client-go by round:%s\n", name, line
		if (probes > 0) {
			printf "%-40s   CPUs even (probe within 5%%): %s\n", "", summary(evens, nevens)
			printf "%-40s   CPUs uneven:                 %s\n", "", summary(odds, nodds)
		}
	}
	if (probes > 0) {
		print ""
		print "probe (impl=floor, 1 handler, pinned to each CPU, cpu-ns/op) by round:"
		for (r = 1; r <= rounds; r++) if (r in probe) printf "  round %d: %s\n", r, probe[r]
	}
}
