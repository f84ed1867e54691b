package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/internal/realpod"
)

// A child of the smoke test is this test binary, re-executed: it runs the
// side it is asked for instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Every scenario, at a small size: both sides in their own processes, the
// table, the JSON file and the charts.
func TestEveryScenarioAtSmallSize(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "out.json")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	profiles := filepath.Join(dir, "profiles")
	require.NoError(t, os.Mkdir(profiles, 0o755))
	err := run(ctx, []string{"-pods", "40", "-rounds", "1", "-components=false", "-json", jsonPath, "-svg", dir,
		"-profile", profiles}, nil, &out)
	require.NoError(t, err)
	table := out.String()
	for _, row := range []string{
		"| sync 40 json |", "| sync 40 protobuf |", "| sync 40 json strip |", "| peak heap sync 40 json (live) |",
		"| heap per cached pod 40 protobuf |", "| relist 40 json |", "| peak heap relist 40 protobuf (live) |",
		"| peak heap relist / own steady 40 json (live) |", "| relist notifications for unchanged pods 40 json |",
		"| burst 40 json (20 updates) |", "| latency p99 burst 40 protobuf |", "| backlog drain 40 protobuf (20 updates) |",
		"| burst cpu per event 40 json |", "| backlog drain cpu per event 40 protobuf |",
		"| burst allocs per event 40 json (end to end, decoding included) |",
		"| backlog drain allocs per event 40 protobuf (end to end, decoding included) |",
		"| burst 100 handlers one slow 40 json |",
		"| heap per cached pod 40 json after random-order churn |", "| heap per cached pod 40 json, 30% unique templates |",
		"| cpu per update 40 json after random-order churn |", "| cpu per update 40 protobuf after random-order churn |",
		"| heap per cached pod 40 json, 30% unique templates, after random-order churn |", "| latency p99 100 handlers one slow 40 json |",
	} {
		assert.Contains(t, table, row)
	}
	assert.NotContains(t, table, "| heap per cached pod 40 protobuf after random-order churn |", "the churned heap row is JSON's")

	var figures []map[string]any
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &figures))
	require.NotEmpty(t, figures)
	for _, f := range figures {
		for _, k := range []string{"name", "unit", "ours", "clientgo", "better"} {
			assert.Contains(t, f, k, "figure %v", f["name"])
		}
		name := f["name"].(string)
		if strings.HasPrefix(name, "sync ") || strings.Contains(name, "allocs per event") || strings.Contains(name, "churn") ||
			strings.Contains(name, "unique templates") {
			assert.Greater(t, f["ours"], 0.0, "%v", f["name"])
			assert.Greater(t, f["clientgo"], 0.0, "%v", f["name"])
		}
	}
	// One set of profiles per step, named after it: the informer's CPU
	// and heap, the server's CPU, and a relist's heap at its peak.
	for _, name := range []string{"01-ours-sync-40-json.child.cpu", "01-ours-sync-40-json.child.heap",
		"01-ours-sync-40-json.server.cpu", "02-ours-relist-40-json.peak.heap", "04-ours-backlog-drain-40-json.child.cpu",
		"09-client-go-backlog-drain-40-json.server.cpu"} {
		fi, err := os.Stat(filepath.Join(profiles, name))
		if assert.NoError(t, err) {
			assert.NotZero(t, fi.Size(), name)
		}
	}
	churn, err := filepath.Glob(filepath.Join(profiles, "*-client-go-churn-40-protobuf-after-random-order-churn.child.cpu"))
	require.NoError(t, err)
	assert.Len(t, churn, 1, "the churn is a profiled step")
	for _, svg := range []string{"sync-time.svg", "sync-heap.svg", "relist-heap.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, svg))
		require.NoError(t, err)
		assert.Contains(t, string(b), "<svg")
	}
}

// -heap runs the heap per cached pod rows alone, churns included.
func TestHeapRowsAlone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"-heap", "-pods", "40", "-rounds", "1", "-encodings", "json"}, nil, &out))
	table := out.String()
	assert.Contains(t, table, "go run ./cmd/compare -heap -rounds 1 -pods 40 -encodings json")
	for _, row := range []string{"| heap per cached pod 40 json |", "| heap per cached pod 40 json after random-order churn |",
		"| heap per cached pod 40 json, 30% unique templates |",
		"| heap per cached pod 40 json, 30% unique templates, after random-order churn |"} {
		assert.Contains(t, table, row)
	}
	for _, row := range []string{"| relist 40 json |", "| burst 40 json", "| sync 40 json strip |", "100 handlers", "pipeline"} {
		assert.NotContains(t, table, row)
	}
}

func TestComponentsAtOneIteration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bench module's benchmarks")
	}
	r := newResults()
	saved := componentBenches
	defer func() { componentBenches = saved }()
	for i := range componentBenches {
		componentBenches[i].quick = "1x"
	}
	require.NoError(t, runComponents(context.Background(), "../..", true, r))
	r.finish()
	for _, name := range []string{"pipeline cpu per event, 1 handler (decoding excluded)", "pipeline alloc per event, 1 handler (decoding excluded)", "writes/s with 10 paced readers (200 lists/s)", "read p99 with 10 paced readers and a writer",
		"selector 100k lister List (client-go: generated lister, full scan)", "selector 100k, both indexed (client-go: label index func, ByIndex)",
		"label index build 100k (ours: UseLabelIndex; client-go: AddIndexers)", "label index heap per pod 100k",
		"write client create, json (server included)", "write client update, json (server included)",
		"write client get, json (server included)", "write client update allocs, json (server included)",
		"work queue heap per backlog item, 100k keys (why: docs/controller.md, What the table costs)",
		"heap per cached configmap 2k protobuf (synced)", "heap per cached node 2k protobuf (after churn)"} {
		f := r.byName[name]
		require.NotNil(t, f, name)
		assert.Greater(t, f.Ours, 0.0, name)
		assert.Greater(t, f.ClientGo, 0.0, name)
	}
}

func TestParseBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkPipeline/handlers=1/impl=informer-2     	   30000	       756.8 ns/op	       834.9 cpu-ns/op	     0.3370 allocs/event
BenchmarkPipeline/handlers=1/impl=client-go-2    	   30000	      1126 ns/op	      1894 cpu-ns/op	     8.790 allocs/event
BenchmarkPipeline/handlers=1/impl=floor-2        	   30000	       300 ns/op	       332 cpu-ns/op
PASS`)
	r := newResults()
	parseBench(out, componentBenches[0].rows, r)
	r.finish()
	cpu := r.byName["pipeline cpu per event, 1 handler (decoding excluded)"]
	require.NotNil(t, cpu)
	assert.Equal(t, 834.9, cpu.Ours)
	assert.Equal(t, 1894.0, cpu.ClientGo)
	assert.Equal(t, 8.79, r.byName["pipeline alloc per event, 1 handler (decoding excluded)"].ClientGo)
}

// The heap rows read two metrics whose units share a prefix.
func TestParseBenchKindHeap(t *testing.T) {
	out := []byte(`BenchmarkCachedKindHeap/kind=nodes/enc=protobuf/impl=informer-2   1   1508927083 ns/op   3448 B/obj   3984 B/obj-churned
BenchmarkCachedKindHeap/kind=nodes/enc=protobuf/impl=client-go-2  1   1079930256 ns/op   8147 B/obj   8209 B/obj-churned
BenchmarkCachedKindHeap/kind=nodes/enc=json/impl=informer-2       1   2479728115 ns/op   3492 B/obj   3985 B/obj-churned`)
	r := newResults()
	parseBench(out, kindHeapRows("node"), r)
	r.finish()
	synced, churned := r.byName["heap per cached node 2k protobuf (synced)"], r.byName["heap per cached node 2k protobuf (after churn)"]
	require.NotNil(t, synced)
	require.NotNil(t, churned)
	assert.Equal(t, []float64{3448}, synced.OursRounds)
	assert.Equal(t, []float64{8147}, synced.ClientGoRounds)
	assert.Equal(t, []float64{3984}, churned.OursRounds)
	assert.Equal(t, []float64{8209}, churned.ClientGoRounds)
}

func TestMedianPercentileThin(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	assert.Equal(t, 98*time.Millisecond, percentile(durations(100), 99)) // 0..99 ms
	assert.Equal(t, 49*time.Millisecond, percentile(durations(100), 50))
	assert.Equal(t, 99*time.Millisecond, percentile(durations(100), 100))
	var s []heapSample
	for i := range 1000 {
		s = append(s, heapSample{At: time.Duration(i), InUse: uint64(i % 97)})
	}
	s[501].InUse = 10_000
	th := thin(s, 100)
	assert.Len(t, th, 100)
	var top uint64
	for _, x := range th {
		top = max(top, x.InUse)
	}
	assert.Equal(t, uint64(10_000), top, "the peak survives thinning")
}

func durations(n int) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration(n-i-1) * time.Millisecond
	}
	return d
}

// Each median comes with its rounds' range, and the ratio with the range
// of the per-round ratios.
func TestMarkdownPrintsSpread(t *testing.T) {
	r := newResults()
	for _, v := range []float64{10, 30, 20} {
		r.add("x", "s", "lower", "ours", v)
	}
	for _, v := range []float64{20, 20, 40} {
		r.add("x", "s", "lower", "client-go", v)
	}
	r.add("one", "s", "lower", "ours", 1)
	r.add("one", "s", "lower", "client-go", 2)
	r.finish()
	var b bytes.Buffer
	r.markdown(&b)
	assert.Contains(t, b.String(), "| x | s | 20.0 (10.0–30.0) | 20.0 (20.0–40.0) | 1.00 (0.50–1.50) | lower |")
	assert.Contains(t, b.String(), "| one | s | 1.00 | 2.00 | 0.50 | lower |", "one round: no range")
	path := filepath.Join(t.TempDir(), "f.json")
	require.NoError(t, r.writeJSON(path))
	j, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(j), `"oursRounds": [`)
}

// Every plan runs each measured size at least twice, with the sides in
// turn; the component benchmarks run one side at a time, in turn too.
func TestRoundsAlternateSides(t *testing.T) {
	for _, p := range []plan{quickPlan(), fullPlan()} {
		for _, n := range p.sizes {
			assert.GreaterOrEqual(t, p.roundsAt(n), 2, "size %d", n)
		}
	}
	assert.Equal(t, []string{"ours", "client-go"}, sides(0))
	assert.Equal(t, []string{"client-go", "ours"}, sides(1))
	runs := componentRuns(2, true)
	require.Len(t, runs, 4*len(componentBenches))
	first := map[string][]string{} // group -> the side that went first, per round
	for i := 0; i < len(runs); i += 2 {
		a, b := runs[i], runs[i+1]
		require.Same(t, a.bench, b.bench)
		assert.NotEqual(t, a.side, b.side)
		first[a.bench.pattern] = append(first[a.bench.pattern], a.side)
		assert.Contains(t, a.args[3], "/^impl="+benchImpl[a.side]+"$")
	}
	for g, f := range first {
		assert.Equal(t, []string{"ours", "client-go"}, f, g)
	}
}

// The churn touches every pod once, in an order of its own each round; the
// mixed population gives 30% of the pods a template of their own.
func TestPopulations(t *testing.T) {
	o := churnOrder(100, 1)
	assert.ElementsMatch(t, durationsIdx(100), o)
	assert.NotEqual(t, durationsIdx(100), o, "random order")
	assert.NotEqual(t, o, churnOrder(100, 2))
	images := map[string]int{}
	for i := range 100 {
		images[realpod.Mixed(i).Spec.Containers[0].Image]++
	}
	unique := 0
	for _, c := range images {
		if c == 1 {
			unique++
		}
	}
	assert.Equal(t, 30, unique)
	p := restarted(realpod.New, 5, 0, time.Unix(100, 0))
	assert.EqualValues(t, 1, p.Status.ContainerStatuses[0].RestartCount)
	assert.NotNil(t, p.Status.ContainerStatuses[0].LastTerminationState.Terminated)
	assert.Equal(t, "100000000000", p.Annotations[writtenAt])
}

func durationsIdx(n int) []int {
	v := make([]int, n)
	for i := range v {
		v[i] = i
	}
	return v
}
