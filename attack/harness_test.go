package attack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// token is the bearer token every attack's client is configured with. It
// must never appear in an error or a log line.
const token = "attack-t0ken-6f1c9e2b7d"

// waitFor bounds every wait for a condition. Generous for a shared,
// loaded machine under -race; a passing test never waits it out.
const waitFor = 15 * time.Second

// attack is one hostile server, the informer pointed at it, and what the
// test observes of both.
type attack struct {
	t        *testing.T
	srv      *httptest.Server
	cfg      rest.Config
	opts     informer.Options
	scope    informer.FactoryOptions        // Namespace and selectors; its Informer is opts
	handler  *informer.Handler[*corev1.Pod] // if set, registered before the informer starts
	requests atomic.Int64                   // requests the hostile server received
	ignore   goleak.Option

	mu   sync.Mutex // guards errs and sent
	errs []error
	sent map[string]bool // "ns/name" of every object the server sent

	logs    syncBuffer // the standard logger's output during the attack
	heap    *heapSampler
	factory *informer.Factory
	inf     *informer.SharedInformer[*corev1.Pod]
	started time.Time
}

// handler is a hostile server's behaviour; it may call a.sent for each
// object it sends.
type handler func(a *attack, w http.ResponseWriter, r *http.Request)

// newAttack starts a plain-HTTP hostile server.
func newAttack(t *testing.T, h handler) *attack {
	return newAttackServer(t, h, httptest.NewServer)
}

// newTLSAttack starts a hostile server over TLS; the client trusts its CA.
func newTLSAttack(t *testing.T, h handler) *attack {
	a := newAttackServer(t, h, httptest.NewTLSServer)
	a.cfg.CAData = certPEM(a.srv)
	return a
}

func newAttackServer(t *testing.T, h handler, start func(http.Handler) *httptest.Server) *attack {
	a := &attack{t: t, sent: map[string]bool{}, ignore: goleak.IgnoreCurrent()}
	a.srv = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.requests.Add(1)
		h(a, w, r)
	}))
	a.cfg = rest.Config{Host: a.srv.URL, BearerToken: token, ContentType: rest.ContentTypeJSON}
	a.opts = informer.Options{OnError: a.record}
	prev := log.Writer()
	log.SetOutput(&a.logs)
	t.Cleanup(func() {
		log.SetOutput(prev)
		a.srv.Close()
	})
	return a
}

// record is the informer's OnError.
func (a *attack) record(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.errs = append(a.errs, err)
}

// sentPod records that the server sent ns/name.
func (a *attack) sentPod(name string) *corev1.Pod {
	a.mu.Lock()
	a.sent["ns/"+name] = true
	a.mu.Unlock()
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"},
	}
}

// start runs a factory with one pod informer against the server.
func (a *attack) start() {
	a.t.Helper()
	a.heap = startHeapSampler()
	fopts := a.scope
	fopts.Informer = a.opts
	a.factory = informer.NewFactory(a.cfg, fopts)
	inf, err := informer.For[*corev1.Pod](a.factory)
	require.NoError(a.t, err)
	a.inf = inf
	if a.handler != nil {
		_, err = inf.AddEventHandler(*a.handler, informer.HandlerOptions{Name: "attack"})
		require.NoError(a.t, err)
	}
	a.started = time.Now()
	a.factory.Start(context.Background())
	// Before the server's Close (cleanups run last first): a test that
	// failed half way must not leave the informer holding connections.
	a.t.Cleanup(a.factory.Shutdown)
	a.t.Cleanup(func() {
		if a.t.Failed() {
			a.t.Logf("attack failed after %v: %d requests, heap +%d KiB peak so far",
				time.Since(a.started).Round(time.Millisecond), a.requests.Load(), a.heap.peak.Load()>>10)
		}
	})
}

// observe lets the attack run for d: the window over which request rates
// and heap growth are measured. (Not a synchronisation: nothing waits for
// anything to happen in it.)
func (a *attack) observe(d time.Duration) {
	time.Sleep(d)
}

// waitErr waits until OnError received an *reflector.Error of kind that
// wraps target (any, when target is nil), and returns it.
func (a *attack) waitErr(kind reflector.Kind, target error) *reflector.Error {
	a.t.Helper()
	var found *reflector.Error
	require.Eventually(a.t, func() bool {
		for _, err := range a.errors() {
			var e *reflector.Error
			if errors.As(err, &e) && e.Kind == kind && (target == nil || errors.Is(e, target)) {
				found = e
				return true
			}
		}
		return false
	}, waitFor, 5*time.Millisecond, "no %v error wrapping %v; got %v", kind, target, a.errorsText())
	require.Positive(a.t, a.inf.Stats().Errors[kind], "the error is counted in Stats too")
	return found
}

// waitSynced waits until the informer's cache holds a full snapshot.
func (a *attack) waitSynced() {
	a.t.Helper()
	require.Eventually(a.t, a.inf.HasSynced, waitFor, 5*time.Millisecond, "not synced; errors: %v", a.errorsText())
}

func (a *attack) errors() []error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]error(nil), a.errs...)
}

func (a *attack) errorsText() string {
	var b strings.Builder
	for i, err := range a.errors() {
		if i == 8 {
			fmt.Fprintf(&b, " ... (%d in all)", len(a.errors()))
			break
		}
		fmt.Fprintf(&b, "\n\t%v", err)
	}
	return b.String()
}

// bounds are what an attack may cost at most while it runs.
type bounds struct {
	requests  int64  // requests the server received, in all
	heap      uint64 // growth of live heap over the baseline, bytes
	allocated uint64 // bytes allocated while the attack ran; 0: not checked
	// perRequest: bytes allocated while the attack ran, for each request
	// the server received (at least one); 0: not checked. It holds what
	// one attempt may cost, however many attempts the observation's
	// second makes room for.
	perRequest uint64
}

// stop shuts the informer down and checks everything every attack must
// hold: the bounds, no goroutine left, no token in any error or log line,
// and no object in the cache that the server did not send.
func (a *attack) stop(b bounds) {
	a.t.Helper()
	elapsed := time.Since(a.started)
	keys := a.cacheKeys()
	a.factory.Shutdown()
	peak, allocated := a.heap.stop()
	n := a.requests.Load()
	a.t.Logf("attack ran %v: %d requests (%.0f/s), heap +%d KiB peak, %d KiB allocated, %d errors",
		elapsed.Round(time.Millisecond), n, float64(n)/elapsed.Seconds(), peak>>10, allocated>>10, len(a.errors()))
	require.LessOrEqual(a.t, n, b.requests, "requests to the hostile server")
	require.Less(a.t, peak, b.heap, "peak heap growth, bytes")
	if b.allocated > 0 {
		require.Less(a.t, allocated, b.allocated, "bytes allocated during the attack")
	}
	if b.perRequest > 0 {
		require.Less(a.t, allocated, uint64(max(n, 1))*b.perRequest, "bytes allocated during the attack, %d requests", n)
	}
	// The server still runs: a keep-alive connection the client kept
	// after Shutdown shows up as its transport goroutines.
	goleak.VerifyNone(a.t, a.ignore,
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*Server).Serve"),
		goleak.IgnoreAnyFunction("net/http/httptest.(*Server).goServe"))
	for _, err := range a.errors() {
		require.NotContains(a.t, err.Error(), token, "the token in an error")
	}
	require.NotContains(a.t, a.logs.String(), token, "the token in a log line")
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		require.True(a.t, a.sent[k], "the cache holds %q, which the server never sent", k)
	}
}

func (a *attack) cacheKeys() []string {
	pods, err := a.inf.Lister().List(labels.Everything())
	require.NoError(a.t, err)
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = p.Namespace + "/" + p.Name
	}
	return keys
}

// ---- measuring the heap ----

// heapSampler samples the live heap every millisecond or so while an
// attack runs, and the bytes allocated over the attack.
type heapSampler struct {
	base, allocs0 uint64
	peak          atomic.Uint64
	done          chan struct{}
	wg            sync.WaitGroup
}

const (
	heapMetric   = "/memory/classes/heap/objects:bytes"
	allocsMetric = "/gc/heap/allocs:bytes"
)

func readMetrics() (heap, allocs uint64) {
	s := []metrics.Sample{{Name: heapMetric}, {Name: allocsMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{done: make(chan struct{})}
	h.base, h.allocs0 = readMetrics()
	h.wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-tick.C:
				h.sample()
			}
		}
	})
	return h
}

func (h *heapSampler) sample() {
	heap, _ := readMetrics()
	if heap > h.base && heap-h.base > h.peak.Load() {
		h.peak.Store(heap - h.base)
	}
}

// stop ends sampling and returns the peak growth and the bytes allocated.
func (h *heapSampler) stop() (peak, allocated uint64) {
	close(h.done)
	h.wg.Wait()
	h.sample()
	_, allocs := readMetrics()
	return h.peak.Load(), allocs - h.allocs0
}

// ---- what hostile servers send ----

func isWatch(r *http.Request) bool {
	w := r.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

func isWatchList(r *http.Request) bool {
	return isWatch(r) && r.URL.Query().Get("sendInitialEvents") == "true"
}

// writeJSON answers with obj as JSON.
func writeJSON(w http.ResponseWriter, code int, obj any) {
	body, _ := json.Marshal(obj)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// podList is a PodList at rv with the given continue token and pods.
func podList(rv, cont string, pods ...*corev1.Pod) *corev1.PodList {
	l := &corev1.PodList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont},
	}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// startStream answers a watch with its headers, flushed.
func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// writeEvent writes one watch frame and flushes it; false when the client
// has gone.
func writeEvent(w http.ResponseWriter, typ string, obj any) bool {
	body, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	if _, err := w.Write(append(body, '\n')); err != nil {
		return false
	}
	w.(http.Flusher).Flush()
	return true
}

// bookmark is a BOOKMARK's object; end marks a WatchList's initial events.
func bookmark(rv string, end bool) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	if end {
		p.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return p
}

// holdOpen keeps a watch open, silent, until the client goes.
func holdOpen(w http.ResponseWriter, r *http.Request) {
	startStream(w)
	<-r.Context().Done()
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (the standard
// logger may be called from any goroutine).
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// certPEM is the PEM form of a TLS test server's certificate, to trust it.
func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
