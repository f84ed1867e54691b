package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// restartTimeout bounds each wait of the restart scenarios: the outage, the
// restart, the convergence. The real server restarts in seconds.
const restartTimeout = 2 * time.Minute

// outageErrors is how many network errors the reflector must meet before
// the server comes back: the broken watch and three failed attempts to
// reach the dead server, a few seconds with the default backoff (800ms,
// doubling, with jitter).
const outageErrors = 4

// outageRequestBound is the most list and watch requests the reflector may
// make during that outage: one per failed attempt, and some slack. A
// reflector that retried at once would make hundreds.
const outageRequestBound = 5

// countingLW counts the requests the reflector makes.
type countingLW struct {
	reflector.ListerWatcher
	lists, watches atomic.Int64
}

func (c *countingLW) List(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	c.lists.Add(1)
	return c.ListerWatcher.List(ctx, opts)
}

func (c *countingLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	c.watches.Add(1)
	return c.ListerWatcher.Watch(ctx, opts)
}

func (c *countingLW) requests() int64 { return c.lists.Load() + c.watches.Load() }

// TestRealAPIServerRestart kills the real kube-apiserver with SIGKILL while
// an informer watches, leaves it down until the reflector has failed to
// reach it three times, optionally compacts etcd meanwhile, starts it again on
// the same port and etcd, and checks what the reflector did: it converges,
// it made only a handful of requests during the outage (no hot loop), and it
// relisted only if the restarted server answered its resourceVersion with
// 410 Gone (once), otherwise resumed its watch without a relist. It runs
// against a server with its watch cache (the default) and one without,
// whose watches read etcd. The log says which each server did;
// docs/reliability.md quotes it.
func TestRealAPIServerRestart(t *testing.T) {
	clusters := realapi.StartAll(t, realapi.Options{}, realapi.Options{DisableWatchCache: true})
	n := 0
	for _, c := range clusters {
		cfg := loadServer(t, c.Kubeconfig).cfg
		for _, ct := range encodings {
			for _, compact := range []bool{false, true} {
				n++
				id := fmt.Sprintf("restart-%d", n)
				name := fmt.Sprintf("watch-cache=%v/%s/compaction=%v", c.WatchCache, encodingName(ct), compact)
				t.Run(name, func(t *testing.T) {
					cfg := cfg
					cfg.ContentType = ct
					restartScenario(t, c, cfg, id, compact)
				})
			}
		}
	}
}

// restartScenario is one kill and restart, watched by an informer of the
// configmaps labelled restart=id.
func restartScenario(t *testing.T, c *realapi.Cluster, cfg rest.Config, id string, compact bool) {
	client := newAPIClient(t, cfg)
	cms := &configMapWriter{t: t, c: client, id: id}
	hlw := newListerWatcher(t, cfg, configMapsResource, wire.Options{Namespace: "default", LabelSelector: "restart=" + id})
	lw := &countingLW{ListerWatcher: hlw}
	var errs errorLog
	inf := informer.New[*corev1.ConfigMap](lw, informer.Options{Name: "configmaps", OnError: errs.add})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = inf.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	t.Cleanup(func() {
		if t.Failed() {
			for _, err := range errs.all() {
				t.Logf("informer error (%v): %v", reflector.KindOf(err), err)
			}
		}
	})

	for i := range 5 {
		cms.create(fmt.Sprintf("cm-%d", i), true)
	}
	cms.requireConverged(inf)
	before, requestsBefore := inf.Stats(), lw.requests()
	// Two writes the informer does not see move etcd's revision past the
	// informer's resourceVersion, as the server's own lease renewals would:
	// compacting at the newest revision then removes the one right after
	// the informer's, where its watch would resume.
	cms.create("unseen-0", false)
	cms.create("unseen-1", false)

	killed := time.Now()
	require.NoError(t, c.KillAPIServer(context.Background()))
	if compact {
		t.Logf("compacted etcd at revision %d during the outage", c.EtcdCompact(t))
	}
	require.True(t, waitUntil(restartTimeout, func() bool {
		return inf.Stats().Errors[reflector.KindNetwork] >= before.Errors[reflector.KindNetwork]+outageErrors
	}), "the reflector must meet the dead server")
	outage, during := time.Since(killed), lw.requests()-requestsBefore

	restarted := time.Now()
	ctxStart, cancelStart := context.WithTimeout(context.Background(), restartTimeout)
	defer cancelStart()
	require.NoError(t, c.StartAPIServer(ctxStart))
	restartTook := time.Since(restarted)
	cms.create("after-0", true)
	cms.update("cm-1")
	cms.remove("cm-2")
	cms.requireConverged(inf)
	converged := time.Since(restarted)

	after := inf.Stats()
	expired := after.Errors[reflector.KindExpired] - before.Errors[reflector.KindExpired]
	relists := after.Relists - before.Relists
	errorsSince := map[reflector.Kind]int64{}
	for kind, n := range after.Errors {
		if d := n - before.Errors[kind]; d > 0 {
			errorsSince[kind] = d
		}
	}
	t.Logf("outage %v: %d requests; restart took %v; converged %v after the restart; "+
		"410 Gone met %d times, relists %d, watches %d, backoffs %d; errors since the kill %v",
		outage.Round(time.Millisecond), during, restartTook.Round(time.Millisecond), converged.Round(time.Millisecond),
		expired, relists, after.Watches-before.Watches, after.Backoffs-before.Backoffs, errorsSince)
	require.LessOrEqual(t, during, int64(outageRequestBound), "requests while the server was down")
	if compact && !c.WatchCache {
		require.Positive(t, expired, "a watch that reads etcd must meet the compaction")
	}
	if expired > 0 {
		require.EqualValues(t, 1, relists, "a 410 after the restart calls for one relist")
	} else {
		require.Zero(t, relists, "the server resumed the watch: no relist")
	}
}

// configMapWriter writes the configmaps of one scenario through the API.
type configMapWriter struct {
	t  *testing.T
	c  *apiClient
	id string
}

const restartCMPath = "/api/v1/namespaces/default/configmaps"

func (w *configMapWriter) body(name string, labelled bool, data string) []byte {
	cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: w.id + "-" + name}, Data: map[string]string{"v": data}}
	if labelled {
		cm.Labels = map[string]string{"restart": w.id}
	}
	b, err := json.Marshal(cm)
	require.NoError(w.t, err)
	return b
}

func (w *configMapWriter) send(method, path string, body []byte, want int) {
	w.t.Helper()
	resp, err := w.c.raw(method, path, body, nil)
	require.NoError(w.t, err)
	require.Equal(w.t, want, resp.Code, "%s %s: %s", method, path, resp.Body)
}

func (w *configMapWriter) create(name string, labelled bool) {
	w.t.Helper()
	w.send(http.MethodPost, restartCMPath, w.body(name, labelled, "0"), http.StatusCreated)
}

func (w *configMapWriter) update(name string) {
	w.t.Helper()
	w.send(http.MethodPut, restartCMPath+"/"+w.id+"-"+name, w.body(name, true, "1"), http.StatusOK)
}

func (w *configMapWriter) remove(name string) {
	w.t.Helper()
	w.send(http.MethodDelete, restartCMPath+"/"+w.id+"-"+name, nil, http.StatusOK)
}

// serverState lists the scenario's configmaps: name -> resourceVersion.
func (w *configMapWriter) serverState() map[string]string {
	w.t.Helper()
	resp, err := w.c.raw(http.MethodGet, restartCMPath+"?labelSelector="+url.QueryEscape("restart="+w.id), nil, nil)
	require.NoError(w.t, err)
	require.Equal(w.t, http.StatusOK, resp.Code, "%s", resp.Body)
	var list corev1.ConfigMapList
	require.NoError(w.t, json.Unmarshal(resp.Body, &list))
	out := map[string]string{}
	for _, cm := range list.Items {
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

func (w *configMapWriter) requireConverged(inf *informer.SharedInformer[*corev1.ConfigMap]) {
	w.t.Helper()
	var server, cache map[string]string
	ok := waitUntil(restartTimeout, func() bool {
		server, cache = w.serverState(), map[string]string{}
		for _, obj := range inf.Indexer().List() {
			cm := obj.(*corev1.ConfigMap)
			cache[cm.Name] = cm.ResourceVersion
		}
		return maps.Equal(server, cache)
	})
	require.True(w.t, ok, "cache %v never reached server %v; reflector %+v", cache, server, inf.Stats())
}
