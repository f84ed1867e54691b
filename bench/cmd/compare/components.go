package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The component benchmarks are this module's side-by-side Go benchmarks
// (scripts/bench.sh runs all of them, with more rounds): the rows the
// issue targets keep an eye on. Each runs as `go test -bench` in the bench
// module, and each sub-benchmark's impl= names its side.

// componentBench is one group of sub-benchmarks and the rows it gives.
type componentBench struct {
	pattern    string // without the impl= level, which componentRuns adds
	quick, all string // -test.benchtime
	rows       []componentRow
}

// componentRow turns one metric of one sub-benchmark into a figure.
type componentRow struct {
	sub    string // the sub-benchmark name without its impl= part
	metric string // the unit benchmark output prints
	name   string
	unit   string
	better string
	scale  float64
}

// The pipeline rows start from decoded objects: decoding, 65–85% of an
// event's cost end to end, is left out, and their names say so; the
// scenarios' "allocs per event" rows include it.
var componentBenches = []componentBench{
	{pattern: "^BenchmarkPipeline$/^handlers=(1|100)$", quick: "30000x", all: "300000x", rows: []componentRow{
		{"BenchmarkPipeline/handlers=1", "cpu-ns/op", "pipeline cpu per event, 1 handler (decoding excluded)", "ns", "lower", 1},
		{"BenchmarkPipeline/handlers=1", "allocs/event", "pipeline alloc per event, 1 handler (decoding excluded)", "allocs", "lower", 1},
		{"BenchmarkPipeline/handlers=100", "cpu-ns/op", "pipeline cpu per event, 100 handlers (decoding excluded)", "ns", "lower", 1},
	}},
	// The write client against client-go's typed clientset; the server is
	// in the benchmark's process, its share alike on both sides.
	{pattern: "^BenchmarkWriteClient$/^op=(create|update|get)$", quick: "200x", all: "2000x", rows: []componentRow{
		{"BenchmarkWriteClient/op=create", "ns/op", "write client create, json (server included)", "µs", "lower", 1e-3},
		{"BenchmarkWriteClient/op=update", "ns/op", "write client update, json (server included)", "µs", "lower", 1e-3},
		{"BenchmarkWriteClient/op=get", "ns/op", "write client get, json (server included)", "µs", "lower", 1e-3},
		{"BenchmarkWriteClient/op=update", "allocs/op", "write client update allocs, json (server included)", "allocs", "lower", 1},
	}},
	// Ours is above client-go's (115 B against 54 at the last quiet
	// measurement): its hash table keeps each item's hash and grows at 3/4
	// full, the price of hashing outside the lock; docs/controller.md,
	// "What the table costs", has the breakdown. The row keeps it in view.
	{pattern: "^BenchmarkWorkqueueBacklog$", quick: "1x", all: "3x", rows: []componentRow{
		{"BenchmarkWorkqueueBacklog", "live-B/item", "work queue heap per backlog item, 100k keys (why: docs/controller.md, What the table costs)", "B", "lower", 1},
	}},
	// Readers at a fixed rate, not flat out: flat-out readers on 2 cores
	// measured how long client-go's writer starves (1,735x in one run,
	// 174x in the next), not the stores.
	{pattern: "^BenchmarkIndexerWritesWithPacedReaders$/^readers=10$", quick: "1s", all: "3s", rows: []componentRow{
		{"BenchmarkIndexerWritesWithPacedReaders/readers=10", "writes/s", "writes/s with 10 paced readers (200 lists/s)", "writes/s", "higher", 1},
		{"BenchmarkIndexerWritesWithPacedReaders/readers=10", "read-p99-us", "read p99 with 10 paced readers and a writer", "µs", "lower", 1},
		{"BenchmarkIndexerWritesWithPacedReaders/readers=10", "read-p50-us", "read p50 with 10 paced readers and a writer", "µs", "lower", 1},
	}},
	{pattern: "^BenchmarkListerSelector$/^objects=100000$", quick: "100x", all: "1000x", rows: []componentRow{
		{"BenchmarkListerSelector/objects=100000", "ns/op", "selector 100k lister List (client-go: generated lister, full scan)", "µs", "lower", 1e-3},
	}},
	// The fair comparison: an index on both sides, and what ours costs.
	{pattern: "^BenchmarkListerSelectorIndexed$/^objects=100000$", quick: "100x", all: "1000x", rows: []componentRow{
		{"BenchmarkListerSelectorIndexed/objects=100000", "ns/op", "selector 100k, both indexed (client-go: label index func, ByIndex)", "µs", "lower", 1e-3},
	}},
	{pattern: "^BenchmarkLabelIndexBuild$/^objects=100000$", quick: "1x", all: "3x", rows: []componentRow{
		{"BenchmarkLabelIndexBuild/objects=100000", "ns/op", "label index build 100k (ours: UseLabelIndex; client-go: AddIndexers)", "ms", "lower", 1e-6},
		{"BenchmarkLabelIndexBuild/objects=100000", "index-B/pod", "label index heap per pod 100k", "B", "lower", 1},
	}},
	// The kinds besides Pods (internal/realobj), 2,000 of each, protobuf
	// (the typed clients' default); the figures are deterministic to a
	// few bytes, so one iteration a round.
	{pattern: "^BenchmarkCachedKindHeap$/^kind=(configmaps|secrets|deployments|replicasets|nodes)$/^enc=protobuf$", quick: "1x", all: "1x",
		rows: kindHeapRows("configmap", "secret", "deployment", "replicaset", "node")},
}

// kindHeapRows are BenchmarkCachedKindHeap's two figures for each kind.
func kindHeapRows(kinds ...string) []componentRow {
	var rows []componentRow
	for _, kind := range kinds {
		sub := "BenchmarkCachedKindHeap/kind=" + kind + "s/enc=protobuf"
		rows = append(rows,
			componentRow{sub, "B/obj", "heap per cached " + kind + " 2k protobuf (synced)", "B", "lower", 1},
			componentRow{sub, "B/obj-churned", "heap per cached " + kind + " 2k protobuf (after churn)", "B", "lower", 1})
	}
	return rows
}

// componentRun is one run of a benchmark binary: one side of one group.
type componentRun struct {
	bench *componentBench
	side  string // "ours" or "client-go"
	args  []string
}

// benchImpl is each side's impl= in the benchmarks' names.
var benchImpl = map[string]string{"ours": "informer", "client-go": "client-go"}

// componentRuns lists the runs of rounds rounds: each group one side at a
// time, the sides in turn (sides), so that neither side always runs
// first, on a warmer or a quieter machine.
func componentRuns(rounds int, quick bool) []componentRun {
	var runs []componentRun
	for round := range rounds {
		for i := range componentBenches {
			cb := &componentBenches[i]
			benchtime := cb.all
			if quick {
				benchtime = cb.quick
			}
			for _, side := range sides(round) {
				pattern := cb.pattern + "/^impl=" + benchImpl[side] + "$"
				runs = append(runs, componentRun{bench: cb, side: side,
					args: []string{"-test.run", "^$", "-test.bench", pattern, "-test.benchtime", benchtime, "-test.benchmem"}})
			}
		}
	}
	return runs
}

// componentRounds is how many rounds of the component benchmarks a run
// takes: at least two, so that each side goes first once.
func componentRounds(quick bool) int {
	if quick {
		return 2
	}
	return 4
}

func runComponents(ctx context.Context, dir string, quick bool, r *results) error {
	tmp, err := os.MkdirTemp("", "compare-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bench.test")
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, ".")
	build.Dir, build.Stderr = dir, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the bench module's tests in %s: %w", dir, err)
	}
	for _, run := range componentRuns(componentRounds(quick), quick) {
		cmd := exec.CommandContext(ctx, bin, run.args...)
		cmd.Dir, cmd.Stderr = dir, os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("%s %s: %w", run.bench.pattern, run.side, err)
		}
		parseBench(out, run.bench.rows, r)
	}
	return nil
}

// parseBench reads `go test -bench` output lines such as
//
//	BenchmarkPipeline/handlers=1/impl=informer-2  30000  756.8 ns/op  834.9 cpu-ns/op
func parseBench(out []byte, rows []componentRow, r *results) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i] // the GOMAXPROCS suffix
		}
		sub, impl, ok := strings.Cut(name, "/impl=")
		if !ok {
			continue
		}
		side := map[string]string{"informer": "ours", "client-go": "client-go"}[impl]
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			for _, row := range rows {
				if row.sub == sub && row.metric == f[i+1] && side != "" {
					r.add(row.name, row.unit, row.better, side, v*row.scale)
				}
			}
		}
	}
}
