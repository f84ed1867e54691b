package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/processor"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

// chaosConfig is what a seed chooses about the informer and the server.
type chaosConfig struct {
	contentType  string
	watchList    reflector.WatchListMode
	pageSize     int64
	atomicRelist bool
	window       int // the server's compaction window
	extra        int // extra fast handlers: 20 puts the informer on its consumer goroutine
}

func (c chaosConfig) paged() bool { return c.pageSize > 0 && c.watchList == reflector.WatchListOff }

func (c chaosConfig) String() string {
	wl := map[reflector.WatchListMode]string{reflector.WatchListAuto: "auto", reflector.WatchListOff: "off"}[c.watchList]
	return fmt.Sprintf("content-type=%s watchlist=%s page-size=%d atomic-relist=%v window=%d extra-handlers=%d",
		c.contentType, wl, c.pageSize, c.atomicRelist, c.window, c.extra)
}

func randomConfig(rng *rand.Rand) chaosConfig {
	return chaosConfig{
		contentType:  []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf}[rng.IntN(2)],
		watchList:    []reflector.WatchListMode{reflector.WatchListAuto, reflector.WatchListOff, reflector.WatchListOff}[rng.IntN(3)],
		pageSize:     []int64{0, 2, 5}[rng.IntN(3)],
		atomicRelist: rng.IntN(2) == 0,
		window:       []int{15, 40, 10000}[rng.IntN(3)],
		extra:        []int{0, 0, 20}[rng.IntN(3)],
	}
}

// chaosRun is one seed: a server behind a proxy, an informer with handlers
// of every kind, rounds of writes under faults, then the check.
type chaosRun struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	cfg   chaosConfig
	start time.Time
	srv   *fakeapi.Server
	proxy *tcpProxy
	lw    *chaosLW
	inf   *informer.SharedInformer[*corev1.Pod]
	w     *scopedWriter

	checked []*chaosHandler // must agree with the server at the end
	removed []*chaosHandler

	mu       sync.Mutex // guards schedule, faults and errs
	schedule []string   // faults and handler changes, as they happened
	faults   map[string]int
	errs     []string
	panics   int
}

// chaosResult is what a seed reports to the summary.
type chaosResult struct {
	faults   map[string]int
	diverged bool
}

// runChaosSeed runs one seed and checks it; a failure reports the seed and
// the history.
func runChaosSeed(t *testing.T, seed uint64) chaosResult {
	rng := rand.New(rand.NewPCG(seed, 20))
	r := &chaosRun{t: t, seed: seed, rng: rng, cfg: randomConfig(rng), start: time.Now(), faults: map[string]int{}}
	r.note("seed %d: %s (rerun with: go test ./integration -run 'TestChaos' -seed %d -v)", seed, r.cfg, seed)
	r.setUp()
	rounds := 3 + rng.IntN(3)
	late, remove := rng.IntN(rounds), rng.IntN(rounds)
	for round := range rounds {
		if round == late {
			r.addLateHandler()
		}
		if round == remove && len(r.checked) > 1 {
			r.removeHandler()
		}
		r.round(round)
	}
	r.srv.Faults().Reset()
	r.proxy.Resume()
	problems := r.awaitQuiet()
	if len(problems) > 0 {
		r.report(problems)
	}
	for _, h := range r.checked {
		if h.reg.Stats().Coalesced > 0 {
			r.counted("handler that coalesced")
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return chaosResult{faults: maps.Clone(r.faults), diverged: len(problems) > 0}
}

// note adds a line to the schedule.
func (r *chaosRun) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.schedule = append(r.schedule, fmt.Sprintf("%8.3fs ", time.Since(r.start).Seconds())+fmt.Sprintf(format, args...))
}

// counted counts one fault injected.
func (r *chaosRun) counted(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults[name]++
}

func (r *chaosRun) onError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var panicked *processor.HandlerPanicError
	if errors.As(err, &panicked) {
		r.panics++
		return
	}
	if len(r.errs) < 200 {
		r.errs = append(r.errs, fmt.Sprintf("%8.3fs %v", time.Since(r.start).Seconds(), err))
	}
}

// setUp starts the server, the proxy and the informer with its first
// handlers, seeds a few pods and waits for the informer to sync.
func (r *chaosRun) setUp() {
	t := r.t
	srv, err := fakeapi.NewServer(fakeapi.Options{BookmarkInterval: 100 * time.Millisecond, CompactionWindow: r.cfg.window})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	r.srv = srv
	r.proxy = newTCPProxy(t, strings.TrimPrefix(srv.URL(), "http://"))
	r.w = &scopedWriter{srv: srv, rng: r.rng}
	r.w.writes(t, r.rng.IntN(12))

	hlw := newListerWatcher(t, rest.Config{Host: "http://" + r.proxy.Addr(), ContentType: r.cfg.contentType}, podsResource,
		wire.Options{Namespace: "shop", LabelSelector: "app=web"})
	r.lw = &chaosLW{ListerWatcher: hlw, run: r}
	ropts := quickInformer()
	ropts.WatchList, ropts.PageSize = r.cfg.watchList, r.cfg.pageSize
	r.inf = informer.New[*corev1.Pod](r.lw, informer.Options{Name: "pods", Reflector: ropts,
		AtomicRelist: r.cfg.atomicRelist, OnError: r.onError})

	r.addHandler("view", informer.HandlerOptions{}, 0, 0)
	r.addHandler("slow", informer.HandlerOptions{BacklogLimit: 1 + r.rng.IntN(8)}, time.Duration(100+r.rng.IntN(900))*time.Microsecond, 0)
	r.addHandler("panicky", informer.HandlerOptions{}, 0, 2+r.rng.IntN(5))
	r.addHandler("keep-all", informer.HandlerOptions{KeepAllUpdates: true}, time.Duration(r.rng.IntN(300))*time.Microsecond, 0)
	for i := range r.cfg.extra {
		r.addHandler(fmt.Sprintf("extra-%d", i), informer.HandlerOptions{}, 0, 0)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.inf.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	syncCtx, cancelSync := context.WithTimeout(ctx, converged)
	defer cancelSync()
	require.True(t, informer.WaitForCacheSync(syncCtx, r.inf), "seed %d: the informer never synced", r.seed)
}

// addHandler registers a checked handler.
func (r *chaosRun) addHandler(name string, opts informer.HandlerOptions, delay time.Duration, panicEvery int) *chaosHandler {
	h := newChaosHandler(name, r.start)
	h.delay, h.panicEvery = delay, panicEvery
	opts.Name = name
	reg, err := r.inf.AddEventHandler(h.handler(), opts)
	require.NoError(r.t, err)
	h.reg = reg
	r.checked = append(r.checked, h)
	r.note("added handler %s (backlog limit %d, keep all %v, delay %v, panic every %d)",
		name, opts.BacklogLimit, opts.KeepAllUpdates, delay, panicEvery)
	return h
}

func (r *chaosRun) addLateHandler() {
	r.addHandler("late", informer.HandlerOptions{BacklogLimit: r.rng.IntN(4)}, time.Duration(r.rng.IntN(500))*time.Microsecond, 0)
	r.counted("late handler")
}

// removeHandler removes one of the checked handlers (not the first) and
// checks that its goroutine stops.
func (r *chaosRun) removeHandler() {
	i := 1 + r.rng.IntN(len(r.checked)-1)
	h := r.checked[i]
	r.checked = slices.Delete(r.checked, i, i+1)
	select {
	case <-h.reg.Remove():
	case <-time.After(converged):
		r.t.Fatalf("seed %d: removing %s never finished", r.seed, h.name)
	}
	h.markRemoved()
	r.removed = append(r.removed, h)
	r.note("removed handler %s", h.name)
	r.counted("removed handler")
}

// round injects a fault the configuration can meet, writes, and heals.
func (r *chaosRun) round(n int) {
	var f chaosFault
	for f = chaosFaults[r.rng.IntN(len(chaosFaults))]; !f.ok(r.cfg); f = chaosFaults[r.rng.IntN(len(chaosFaults))] {
	}
	// A fault aimed at the watch needs one the server knows about: wait for
	// a bookmark, which only an established watch receives.
	start := r.inf.Stats()
	if !waitUntil(chaosFaultWait, func() bool {
		s := r.inf.Stats()
		return s.State == reflector.StateWatching && s.Events[watch.Bookmark] > start.Events[watch.Bookmark]
	}) {
		r.note("round %d: no bookmark within %v; reflector %+v", n, chaosFaultWait, r.inf.Stats())
	}
	r.note("round %d: %s", n, f.name)
	before := r.inf.Stats()
	a := f.inject(r)
	writes := 5 + r.rng.IntN(20)
	r.w.writes(r.t, writes/2)
	met := waitUntil(chaosFaultWait, func() bool { return a.met(before, r.inf.Stats()) })
	r.w.writes(r.t, writes-writes/2)
	if r.rng.IntN(2) == 0 {
		updates := 130 + r.rng.IntN(200)
		require.NoError(r.t, r.w.flood(updates))
		r.note("round %d: flood of %d updates", n, updates)
	}
	a.heal()
	if met {
		r.counted(f.name)
	} else {
		r.counted(f.name + " (not met)")
		r.t.Logf("seed %d round %d: %s not met within %v; reflector %+v", r.seed, n, f.name, chaosFaultWait, r.inf.Stats())
	}
	r.note("round %d: %d writes, met=%v, healed; server at rv=%d", n, writes, met, r.srv.ResourceVersion())
}

// chaosFaultWait bounds the wait for the reflector to run into a fault.
// Every fault is met well within it, even under -race on a loaded machine:
// a fault not met is counted apart in the summary, as a sign that the
// checker has lost its teeth.
const chaosFaultWait = 5 * time.Second

// serverState returns key -> resourceVersion of the server's objects in the
// informer's scope.
func (r *chaosRun) serverState() map[string]uint64 {
	objs, err := r.srv.Objects(podsGVR)
	require.NoError(r.t, err)
	selector := labels.SelectorFromSet(labels.Set{"app": "web"})
	out := map[string]uint64{}
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.Namespace == "shop" && selector.Matches(labels.Set(p.Labels)) {
			out[p.Namespace+"/"+p.Name] = podRV(p)
		}
	}
	return out
}

// problems checks every invariant once and returns what fails.
func (r *chaosRun) problems() []string {
	server := r.serverState()
	cache := map[string]uint64{}
	list, err := r.inf.Lister().List(labels.Everything())
	require.NoError(r.t, err)
	for _, p := range list {
		cache[p.Namespace+"/"+p.Name] = podRV(p)
	}
	var out []string
	if !maps.Equal(cache, server) {
		out = append(out, fmt.Sprintf("cache %v != server %v", cache, server))
	}
	for _, h := range r.checked {
		out = append(out, h.problems(server)...)
	}
	for _, h := range r.removed {
		h.mu.Lock()
		out = append(out, h.bad...)
		h.mu.Unlock()
		if st := h.reg.Stats(); st.Pending != 0 {
			out = append(out, fmt.Sprintf("%s: removed, yet %d pending", h.name, st.Pending))
		}
	}
	return out
}

// awaitQuiet waits until every invariant holds, or the deadline, and
// returns the problems of the last check.
func (r *chaosRun) awaitQuiet() []string {
	var problems []string
	waitUntil(converged, func() bool {
		problems = r.problems()
		return len(problems) == 0
	})
	return problems
}

// report fails the test with the seed, what is wrong and the history: the
// schedule, the server's writes, the frames it sent and what each handler
// was told.
func (r *chaosRun) report(problems []string) {
	t := r.t
	r.mu.Lock()
	schedule, errs, panics := slices.Clone(r.schedule), slices.Clone(r.errs), r.panics
	r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d diverged (%s):\n", r.seed, r.cfg)
	for _, p := range problems {
		fmt.Fprintf(&b, "  PROBLEM %s\n", p)
	}
	b.WriteString("schedule:\n")
	for _, line := range schedule {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	b.WriteString("writes:\n")
	for _, w := range r.srv.Writes() {
		fmt.Fprintf(&b, "  rv=%d %s %s/%s\n", w.ResourceVersion, w.Type, w.Namespace, w.Name)
	}
	b.WriteString("frames sent:\n")
	for _, e := range r.srv.SentEvents() {
		if e.Type != watch.Bookmark || e.InitialEvent {
			fmt.Fprintf(&b, "  watch=%d %s rv=%s %s/%s initial=%v\n", e.WatchID, e.Type, e.ResourceVersion, e.Namespace, e.Name, e.InitialEvent)
		}
	}
	for _, h := range append(slices.Clone(r.checked), r.removed...) {
		fmt.Fprintf(&b, "notifications delivered to %s (%+v):\n", h.name, h.reg.Stats())
		for _, line := range h.history() {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	fmt.Fprintf(&b, "informer errors (%d handler panics not listed):\n", panics)
	for _, e := range errs {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	fmt.Fprintf(&b, "reflector %+v\n", r.inf.Stats())
	t.Error(b.String())
}
