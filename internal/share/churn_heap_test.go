package share

import (
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer/internal/realpod"
)

// BenchmarkChurnHeap is the heap a cache of pods holds, per pod, with this
// package as the informer uses it (a strings table for the decoder, a
// values table for the cache), without the informer around it: each pod
// decoded from its JSON (encoding/json), its strings interned and its
// values shared, held by index; then every pod written in random order as
// bench/cmd/compare's churn writes them (realpod.Restarted and a write
// time of its own) and replaced, twice. B/pod is once synced, B/pod-churn1
// and B/pod-churn2 after each churn; the tables' entries per pod beside
// them. It measures in seconds what compare -heap measures in minutes,
// and the same difference: what a churn adds, and where (run it with
// -memprofile).
//
//	go test -run '^$' -bench ChurnHeap -benchtime 1x ./internal/share/
func BenchmarkChurnHeap(b *testing.B) {
	for _, pop := range []struct {
		name string
		pod  func(int) *corev1.Pod
	}{{"replicasets", realpod.New}, {"unique30", realpod.Mixed}} {
		b.Run(pop.name, func(b *testing.B) {
			for b.Loop() {
				churnHeap(b, 10_000, pop.pod)
			}
		})
	}
}

func churnHeap(b *testing.B, n int, pod func(int) *corev1.Pod) {
	strs, vals := &Table{Budget: StringsBudget}, &Table{}
	decode := func(p *corev1.Pod) *corev1.Pod {
		raw, err := json.Marshal(p)
		require.NoError(b, err)
		var q corev1.Pod
		require.NoError(b, json.Unmarshal(raw, &q))
		strs.Strings(&q)
		vals.Share(&q)
		return &q
	}
	cache := make([]*corev1.Pod, n)
	before := heapNow()
	for i := range n {
		cache[i] = decode(pod(i))
	}
	report := func(unit string, at int64) {
		b.ReportMetric(float64(heapNow()-at)/float64(n), unit)
	}
	report("B/pod", before)
	for round := range 2 {
		for _, i := range realpod.ChurnOrder(n, round) {
			p := realpod.Restarted(pod(i), i, round, time.Now())
			p.Annotations["bench.informer/written-at"] = strconv.FormatInt(time.Now().UnixNano(), 10)
			cache[i] = decode(p)
		}
		report(fmt.Sprintf("B/pod-churn%d", round+1), before)
	}
	s, v := strs.Stats(), vals.Stats()
	b.ReportMetric(float64(s.Strings)/float64(n), "strings/pod")
	b.ReportMetric(float64(v.Values)/float64(n), "values/pod")
	goruntime.KeepAlive(cache)
}

func heapNow() int64 {
	goruntime.GC()
	goruntime.GC() // a second cycle: the first clears the weak pointers of what it freed
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkStringsChurned is BenchmarkStrings for pods as a churn writes
// them: each with a write time of its own in its annotations, a string
// met once, as every update of compare's churn carries.
//
//	go test -run '^$' -bench StringsChurned -benchmem ./internal/share/
func BenchmarkStringsChurned(b *testing.B) {
	src := realPods(1000)
	var tbl Table
	var batch []*corev1.Pod
	stamp := 0
	b.ReportAllocs()
	for b.Loop() {
		if len(batch) == 0 {
			b.StopTimer()
			for _, p := range src {
				q := p.DeepCopy()
				stamp++
				q.Annotations["bench.informer/written-at"] = strconv.Itoa(1e18 + stamp)
				batch = append(batch, q)
			}
			b.StartTimer()
		}
		tbl.Strings(batch[len(batch)-1])
		batch = batch[:len(batch)-1]
	}
}
