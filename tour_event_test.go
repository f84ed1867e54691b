package informer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// eventTour is the state the steps of docs/tour.md share.
type eventTour struct {
	ctx     context.Context
	cleanup func(func())
	srv     *fakeapi.Server
	pods    *informer.SharedInformer[*corev1.Pod]
	reg     *informer.Registration
	seen    *tourHandler
	heard   chan *corev1.Pod // the object the handler's OnUpdate received
	before  map[watch.EventType]int64
}

// TestTour performs docs/tour.md: one label added to shop/web-1, followed
// from the server's history to the handler and the lister.
func TestTour(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	tour := eventTour{ctx: t.Context(), cleanup: t.Cleanup, heard: make(chan *corev1.Pod, 1)}
	tour.setup(t)
	runTour(t, "docs/tour.md", []tourStep{
		{"1. The write gets a resourceVersion (fakeapi)", tour.write},
		{"2. The event goes on the wire (fakeapi)", tour.wire},
		{"3. The frame becomes an object, once (reflector/wire)", tour.decoded},
		{"4. The reflector records the change (reflector)", tour.recorded},
		{"5. The queue files a delta under the key (deltafifo)", tour.queued},
		{"6. The consumer writes the cache, then tells the handlers (informer)", tour.applied},
		{"7. Each handler hears it at its own pace (processor)", tour.handled},
		{"8. Readers see it, without a network", tour.read},
	})
}

// setup is the page's opening: 41 pods (web-1 is the first, at RV 1), a
// synced informer watching from RV 41.
func (tour *eventTour) setup(t *testing.T) {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	tour.cleanup(srv.Close)
	tour.srv = srv
	for i := 1; i <= 41; i++ {
		_, err := srv.Create(pod("shop", fmt.Sprintf("web-%d", i), nil))
		require.NoError(t, err)
	}
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	tour.cleanup(factory.Shutdown)
	tour.pods, err = informer.For[*corev1.Pod](factory)
	require.NoError(t, err)
	tour.seen = &tourHandler{}
	h := tour.seen.handler()
	record := h.OnUpdate
	h.OnUpdate = func(old, p *corev1.Pod) { record(old, p); tour.heard <- p }
	h.OnAdd = nil // the 41 initial adds are not this page's subject
	tour.reg, err = tour.pods.AddEventHandler(h, informer.HandlerOptions{Name: "tour"})
	require.NoError(t, err)
	factory.Start(tour.ctx)
	require.True(t, informer.WaitForCacheSync(tour.ctx, tour.pods, tour.reg))
	// The reflector records the snapshot's RV once Replace has returned,
	// which may be just after the informer reported the sync. Nothing the
	// test can hear marks that moment, so this wait (and those in steps 4
	// and 7, for the same reason) is a condition with a deadline; the
	// handler's update is awaited on tour.heard.
	require.Eventually(t, func() bool { return tour.pods.LastSyncResourceVersion() == "41" }, waitFor, time.Millisecond)
	tour.before = tour.pods.Stats().Events
}

func (tour *eventTour) write(t *testing.T) []string {
	out, err := tour.srv.Update(pod("shop", "web-1", map[string]string{"tier": "front"}))
	require.NoError(t, err)
	p := out.(*corev1.Pod)
	return []string{fmt.Sprintf("%s/%s written at resourceVersion %s", p.Namespace, p.Name, p.ResourceVersion)}
}

// wire reads the frame as any client would: a watch from 41, over HTTP.
func (tour *eventTour) wire(t *testing.T) []string {
	ctx, cancel := context.WithTimeout(tour.ctx, waitFor)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		tour.srv.URL()+"/api/v1/namespaces/shop/pods?watch=true&resourceVersion=41", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
	require.NoError(t, err)
	// Keep the fields the page follows; the rest (uid, creationTimestamp,
	// spec, status) are as the server sent them, and not this page's point.
	var frame struct {
		Type   string `json:"type"`
		Object struct {
			Kind       string `json:"kind"`
			APIVersion string `json:"apiVersion"`
			Metadata   struct {
				Name            string            `json:"name"`
				Namespace       string            `json:"namespace"`
				ResourceVersion string            `json:"resourceVersion"`
				Labels          map[string]string `json:"labels"`
			} `json:"metadata"`
		} `json:"object"`
	}
	require.NoError(t, json.Unmarshal(line, &frame))
	trimmed, err := json.Marshal(frame)
	require.NoError(t, err)
	return []string{string(trimmed)}
}

func (tour *eventTour) decoded(t *testing.T) []string {
	p := <-tour.heard // by now the informer has decoded, queued, cached and delivered it
	tour.heard <- p
	return []string{fmt.Sprintf("decoded into %T %s/%s", p, p.Namespace, p.Name)}
}

func (tour *eventTour) recorded(t *testing.T) []string {
	// The reflector advances its position once Store.Update has returned,
	// which may be just after the handler was told.
	require.Eventually(t, func() bool { return tour.pods.LastSyncResourceVersion() == "42" }, waitFor, time.Millisecond)
	s := tour.pods.Stats()
	return []string{fmt.Sprintf("MODIFIED events %d, last synced resourceVersion %s, relists %d",
		s.Events[watch.Modified]-tour.before[watch.Modified], s.LastSyncResourceVersion, s.Relists)}
}

func (tour *eventTour) queued(t *testing.T) []string {
	q := tour.pods.QueueStats()
	return []string{fmt.Sprintf("items waiting in the queue: %d", q.Depth)}
}

func (tour *eventTour) applied(t *testing.T) []string {
	cached, ok := tour.pods.Indexer().Get("shop/web-1")
	require.True(t, ok)
	heard := <-tour.heard
	require.Same(t, cached, heard, "the handler is given the cache's own object")
	return append(tour.seen.take(), fmt.Sprintf("cache: shop/web-1 at resourceVersion %s, tier=%s",
		cached.(*corev1.Pod).ResourceVersion, cached.(*corev1.Pod).Labels["tier"]))
}

func (tour *eventTour) handled(t *testing.T) []string {
	require.Eventually(t, func() bool { return tour.reg.Stats().Pending == 0 }, waitFor, time.Millisecond)
	return []string{fmt.Sprintf("handler %q: pending %d", tour.reg.Stats().Name, tour.reg.Stats().Pending)}
}

func (tour *eventTour) read(t *testing.T) []string {
	got, err := tour.pods.Lister().Namespace("shop").Get("web-1")
	require.NoError(t, err)
	front, err := tour.pods.Lister().List(labels.SelectorFromSet(labels.Set{"tier": "front"}))
	require.NoError(t, err)
	require.Len(t, front, 1)
	return []string{
		fmt.Sprintf("Lister().Namespace(\"shop\").Get(\"web-1\"): resourceVersion %s", got.ResourceVersion),
		fmt.Sprintf("Lister().List(tier=front): %s/%s", front[0].Namespace, front[0].Name),
	}
}
