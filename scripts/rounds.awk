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
# to the ratios.

# A probe line (only the probe file has them).
/^round [0-9]+ cpu0 / {
	probe[$2] = sprintf("cpu0 %s cpu1 %s (%.2fx)", $4, $6, $6 > 0 ? $4 / $6 : 0)
	probes++
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

END {
	for (k = 1; k <= n; k++) {
		name = names[k]
		line = ""
		count = 0
		for (r = 1; r <= rounds; r++) {
			ours = value[name, "informer", r]
			theirs = value[name, "client-go", r]
			if (ours == "" || theirs == "" || theirs == 0) continue
			line = line sprintf(" %.2f", ours / theirs)
			count++
		}
		if (count > 0) printf "%-40s ours/client-go by round:%s\n", name, line
	}
	if (probes > 0) {
		print ""
		print "probe (impl=floor, 1 handler, pinned to each CPU, cpu-ns/op) by round:"
		for (r = 1; r <= rounds; r++) if (r in probe) printf "  round %d: %s\n", r, probe[r]
	}
}
