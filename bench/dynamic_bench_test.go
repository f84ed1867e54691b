package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	ourrest "github.com/seed31a95821/informer/rest"
)

// The dynamic informers, side by side: a custom resource no Go type
// describes, held as *unstructured.Unstructured, synced from fakeapi by
// our informer.ForDynamic and by client-go's dynamicinformer. Both ask
// for JSON (a CRD has no protobuf form) and both sync with a WatchList
// (client-go's WatchListClient is on by default since 1.35).

const dynamicObjects = 10_000

var widgetsGVR = schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: "widgets"}

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.bench.example.com"},
"spec":{"group":"bench.example.com","scope":"Namespaced",
 "names":{"plural":"widgets","singular":"widget","kind":"Widget"},
 "versions":[{"name":"v1","served":true,"storage":true,
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// widget is one custom object of a realistic shape: labels, a spec with
// integers, a list of ports, and a status with a condition.
func widget(i int) map[string]any {
	return map[string]any{
		"apiVersion": "bench.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{
			"namespace": fmt.Sprintf("team-%d", i%20), "name": fmt.Sprintf("widget-%05d", i),
			"labels":      map[string]any{"app": fmt.Sprintf("app-%d", i%50), "tier": "frontend", "shard": fmt.Sprint(i % 8)},
			"annotations": map[string]any{"example.com/owner": fmt.Sprintf("team-%d", i%20)},
		},
		"spec": map[string]any{
			"replicas": int64(1 + i%5), "image": fmt.Sprintf("registry.example.com/app-%d:1.%d.0", i%50, i%7),
			"ports":     []any{map[string]any{"name": "http", "port": int64(8080), "protocol": "TCP"}},
			"resources": map[string]any{"cpu": "100m", "memory": "128Mi"},
			"paused":    false,
		},
		"status": map[string]any{
			"observedGeneration": int64(1), "readyReplicas": int64(1 + i%5),
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "AllReplicasReady",
				"lastTransitionTime": "2026-01-01T00:00:00Z"}},
		},
	}
}

// newWidgetServer serves the Widget CRD and n widgets.
func newWidgetServer(tb testing.TB, n int) *fakeapi.Server {
	tb.Helper()
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(tb, err)
	tb.Cleanup(srv.Close)
	crd := &unstructured.Unstructured{}
	require.NoError(tb, json.Unmarshal([]byte(widgetCRD), &crd.Object))
	_, err = srv.Create(crd)
	require.NoError(tb, err)
	for i := range n {
		_, err := srv.Create(&unstructured.Unstructured{Object: widget(i)})
		require.NoError(tb, err)
	}
	return srv
}

// dynamicSync syncs one dynamic informer of widgets from host and returns
// how many objects it caches and a function that stops it. The informer
// stays reachable until stop is called, so the heap measured before then
// holds its cache.
type dynamicSync func(ctx context.Context, host string) (cached int, stop func(), err error)

// widgetsResource names widgets for our factory, as discovery would: the
// override spares the one discovery request, which client-go's dynamic
// informer does not make either.
var widgetsResource = informer.Resource{Kind: widgetsGVR.GroupVersion().WithKind("Widget"), Plural: "widgets"}

func syncOursDynamic(ctx context.Context, host string) (int, func(), error) {
	f := informer.NewFactory(ourrest.Config{Host: host, QPS: 1000, Burst: 1000},
		informer.FactoryOptions{Resources: []informer.Resource{widgetsResource}})
	inf, err := informer.ForDynamic(f, widgetsGVR)
	if err != nil {
		f.Shutdown()
		return 0, nil, err
	}
	f.Start(ctx)
	for name, ok := range f.WaitForCacheSync(ctx) {
		if !ok {
			f.Shutdown()
			return 0, nil, fmt.Errorf("%s did not sync", name)
		}
	}
	return inf.Indexer().Len(), func() { runtime.KeepAlive(inf); f.Shutdown() }, nil
}

func syncClientGoDynamic(ctx context.Context, host string) (int, func(), error) {
	dc, err := dynamic.NewForConfig(&rest.Config{Host: host, QPS: 1000, Burst: 1000})
	if err != nil {
		return 0, nil, err
	}
	fac := dynamicinformer.NewDynamicSharedInformerFactory(dc, 0)
	inf := fac.ForResource(widgetsGVR).Informer()
	stopCh := make(chan struct{})
	stop := func() { close(stopCh); fac.Shutdown() }
	fac.Start(stopCh)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		stop()
		return 0, nil, fmt.Errorf("client-go's dynamic informer did not sync")
	}
	return len(inf.GetStore().ListKeys()), func() { runtime.KeepAlive(inf); stop() }, nil
}

// BenchmarkDynamicInformerSync measures, per implementation, the wall time
// from a new informer to a synced cache of 10k custom objects (sync-ms),
// the CPU time of the whole process meanwhile (cpu-ms), and the heap that
// stays allocated while the informer holds them, per object (heap-B/obj:
// HeapAlloc after a GC, minus the same before the informer was made).
//
// Two servers: server=fakeapi encodes every object for every sync, in the
// same process, so its work is in both implementations' sync-ms and
// cpu-ms; server=replay answers from the bytes fakeapi sent once
// (widgetReplay), so the figures are the informers' own. The heap of
// either server is not in heap-B/obj: it holds the objects before and
// after.
//
//	go test -run '^$' -bench DynamicInformerSync -benchtime 5x .
func BenchmarkDynamicInformerSync(b *testing.B) {
	srv := newWidgetServer(b, dynamicObjects)
	replay := httptest.NewServer(recordWidgets(b, srv))
	b.Cleanup(func() { replay.CloseClientConnections(); replay.Close() })
	for _, server := range []struct{ name, url string }{{"fakeapi", srv.URL()}, {"replay", replay.URL}} {
		for _, impl := range []struct {
			name string
			sync dynamicSync
		}{{"ours", syncOursDynamic}, {"client-go", syncClientGoDynamic}} {
			b.Run("server="+server.name+"/impl="+impl.name, func(b *testing.B) { benchmarkDynamicSync(b, server.url, impl.sync) })
		}
	}
}

// widgetReplay answers an informer's list and watch requests for widgets
// with bytes recorded once from fakeapi: a LIST body, and a WatchList
// body (every widget ADDED, then the bookmark that ends the initial
// events). A watch then stays open, silent, until the client leaves.
type widgetReplay struct {
	list, watchList []byte
}

// recordWidgets records srv's answer to a LIST of every widget and builds
// the WatchList answer from its items.
func recordWidgets(tb testing.TB, srv *fakeapi.Server) *widgetReplay {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/apis/bench.example.com/v1/widgets", nil)
	require.NoError(tb, err)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	require.NoError(tb, json.Unmarshal(body, &list))
	require.Len(tb, list.Items, dynamicObjects)
	var events bytes.Buffer
	for _, item := range list.Items {
		events.WriteString(`{"type":"ADDED","object":`)
		events.Write(item)
		events.WriteString("}\n")
	}
	fmt.Fprintf(&events, `{"type":"BOOKMARK","object":{"apiVersion":"bench.example.com/v1","kind":"Widget",`+
		`"metadata":{"resourceVersion":%q,"annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", list.Metadata.ResourceVersion)
	http.DefaultClient.CloseIdleConnections()
	return &widgetReplay{list: body, watchList: events.Bytes()}
}

func (r *widgetReplay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	q := req.URL.Query()
	if q.Get("watch") != "true" {
		_, _ = w.Write(r.list)
		return
	}
	w.WriteHeader(http.StatusOK)
	if q.Get("sendInitialEvents") == "true" {
		_, _ = w.Write(r.watchList)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	<-req.Context().Done()
}

func benchmarkDynamicSync(b *testing.B, host string, sync dynamicSync) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// One untimed sync first: whatever the server caches on its first
	// answer is then in the baseline of every measured run.
	_, stop, err := sync(ctx, host)
	require.NoError(b, err)
	stop()
	var elapsed, cpu time.Duration
	var heap float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		before := heapAfterGC()
		b.StartTimer()
		start, startCPU := time.Now(), processCPU()
		cached, stop, err := sync(ctx, host)
		elapsed += time.Since(start)
		cpu += processCPU() - startCPU
		b.StopTimer()
		require.NoError(b, err)
		require.Equal(b, dynamicObjects, cached)
		heap += float64(heapAfterGC()) - float64(before)
		stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "sync-ms")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms")
	b.ReportMetric(heap/float64(b.N)/dynamicObjects, "heap-B/obj")
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestDynamicInformersAgree is the benchmark's check: on a small server
// both informers sync every widget.
func TestDynamicInformersAgree(t *testing.T) {
	srv := newWidgetServer(t, dynamicObjects)
	replay := httptest.NewServer(recordWidgets(t, srv))
	defer replay.Close()
	defer replay.CloseClientConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, host := range []string{srv.URL(), replay.URL} {
		for _, sync := range []dynamicSync{syncOursDynamic, syncClientGoDynamic} {
			cached, stop, err := sync(ctx, host)
			require.NoError(t, err)
			require.Equal(t, dynamicObjects, cached)
			stop()
		}
	}
}
