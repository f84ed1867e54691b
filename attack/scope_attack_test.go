package attack_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
)

// Attacks through what a server sends that it should not: objects outside
// the informer's scope, and names no real object can have (issue 32,
// items 7 and 8). The server ignores the namespace and the selectors it is
// asked for; the informer must refuse what falls outside them, with a
// typed error, and neither cache it nor tell a handler of it.

// pod is a pod the server sends, recorded as sent.
func (a *attack) pod(ns, name, rv string, labels map[string]string) *corev1.Pod {
	a.mu.Lock()
	a.sent[ns+"/"+name] = true
	a.mu.Unlock()
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: labels},
	}
}

// told records the keys of every object a handler was told of.
type told struct {
	mu   sync.Mutex // guards keys
	keys map[string]bool
}

func (h *told) handler() *informer.Handler[*corev1.Pod] {
	h.keys = map[string]bool{}
	note := func(p *corev1.Pod) {
		h.mu.Lock()
		h.keys[p.Namespace+"/"+p.Name] = true
		h.mu.Unlock()
	}
	return &informer.Handler[*corev1.Pod]{
		OnAdd:    func(p *corev1.Pod, _ bool) { note(p) },
		OnUpdate: func(_, p *corev1.Pod) { note(p) },
		OnDelete: func(p *corev1.Pod, _ bool) { note(p) },
	}
}

func (h *told) has(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.keys[key]
}

func (h *told) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var keys []string
	for k := range h.keys {
		keys = append(keys, k)
	}
	return keys
}

// hostileFeed is what a hostile server sends: a list (or a WatchList's
// initial events), then watch events, each mixing objects the informer
// asked for with ones it did not. last is an object it asked for, sent
// after everything else: once a handler has heard of it, it has heard of
// everything before it.
type hostileFeed struct {
	list   func(a *attack) []*corev1.Pod
	events func(a *attack) []watchEvent
	last   func(a *attack) *corev1.Pod
}

type watchEvent struct {
	typ string
	pod *corev1.Pod
}

// serve answers lists, WatchLists and watches from feed, whatever the
// request's namespace and selectors: the first watch carries the events
// and last, later ones are held open, silent.
func (feed hostileFeed) serve() handler {
	var watches atomic.Int64
	return func(a *attack, w http.ResponseWriter, r *http.Request) {
		switch {
		case isWatchList(r):
			startStream(w)
			for _, p := range feed.list(a) {
				writeEvent(w, "ADDED", p)
			}
			writeEvent(w, "BOOKMARK", bookmark("5", true))
			feed.watch(a, w, r, watches.Add(1) == 1)
		case isWatch(r):
			startStream(w)
			feed.watch(a, w, r, watches.Add(1) == 1)
		default:
			writeJSON(w, http.StatusOK, podList("5", "", feed.list(a)...))
		}
	}
}

func (feed hostileFeed) watch(a *attack, w http.ResponseWriter, r *http.Request, first bool) {
	if first {
		for _, ev := range feed.events(a) {
			writeEvent(w, ev.typ, ev.pod)
		}
		writeEvent(w, "ADDED", feed.last(a))
	}
	<-r.Context().Done()
}

// runFeed starts an informer against feed, in each of the ways it gets
// its snapshot, and returns once a handler has heard of feed.last: the
// cache then holds what it will hold.
func runFeed(t *testing.T, scope informer.FactoryOptions, feed hostileFeed, check func(a *attack, h *told)) {
	for _, mode := range []reflector.WatchListMode{reflector.WatchListOff, reflector.WatchListOn} {
		t.Run("watchlist="+mode.String(), func(t *testing.T) {
			h := &told{}
			a := newAttack(t, feed.serve())
			a.scope = scope
			a.handler = h.handler()
			a.opts.Reflector.WatchList = mode
			a.start()
			a.waitSynced()
			last := feed.last(a)
			require.Eventually(t, func() bool { return h.has(last.Namespace + "/" + last.Name) }, waitFor, 5*time.Millisecond,
				"the handler never heard of the last object; errors: %v", a.errorsText())
			check(a, h)
			a.stop(bounds{requests: 10, heap: 16 << 20})
		})
	}
}

// Item 7: a server that ignores the namespace, the label selector and the
// field selector on metadata.name. What it sends outside them used to be
// cached and told to handlers; it is refused, KindRefused wrapping
// ErrOutOfScope, counted in Stats, and neither cached nor told.
func TestAttackOutOfScopeObjects(t *testing.T) {
	web := map[string]string{"app": "web"}
	scope := informer.FactoryOptions{Namespace: "ns", LabelSelector: "app=web", FieldSelector: "metadata.name!=excluded"}
	feed := hostileFeed{
		list: func(a *attack) []*corev1.Pod {
			return []*corev1.Pod{
				a.pod("ns", "a", "2", web),
				a.pod("other", "a", "2", web),                          // another namespace
				a.pod("ns", "db", "3", map[string]string{"app": "db"}), // the label selector excludes it
				a.pod("ns", "unlabelled", "3", nil),
				a.pod("ns", "excluded", "4", web), // the field selector excludes it
			}
		},
		events: func(a *attack) []watchEvent {
			return []watchEvent{
				{"ADDED", a.pod("other", "b", "6", web)},
				{"ADDED", a.pod("ns", "db2", "7", map[string]string{"app": "db"})},
				{"ADDED", a.pod("ns", "excluded", "8", web)},
				{"MODIFIED", a.pod("other", "a", "9", web)},
				{"DELETED", a.pod("other", "b", "10", web)},
				// a, out of scope now: a conforming server sends a DELETED
				// of its last state in scope instead.
				{"MODIFIED", a.pod("ns", "a", "11", map[string]string{"app": "db"})},
			}
		},
		last: func(a *attack) *corev1.Pod { return a.pod("ns", "last", "12", web) },
	}
	runFeed(t, scope, feed, func(a *attack, h *told) {
		require.ElementsMatch(t, []string{"ns/a", "ns/last"}, a.cacheKeys(), "the cache")
		require.ElementsMatch(t, []string{"ns/a", "ns/last"}, h.all(), "what the handler was told of")
		a.waitErr(reflector.KindRefused, reflector.ErrOutOfScope)
		p, err := a.inf.Lister().Get("ns", "a")
		require.NoError(t, err)
		require.Equal(t, "web", p.Labels["app"], "the refused MODIFIED left the cached state alone")
		require.GreaterOrEqual(t, a.inf.Stats().Errors[reflector.KindRefused], int64(4), "every refusal is counted")
	})
}

// Item 8: names that collide as keys. Pod "a/b" of namespace "default" and
// pod "b" of namespace "default/a" share the key "default/a/b": one
// overwrote the other, and a DELETED of one deleted the other. A name
// "../../etc" was cached. Such names cannot be a real object's; they are
// refused, KindRefused wrapping ErrInvalidName.
func TestAttackCollidingNames(t *testing.T) {
	feed := hostileFeed{
		list: func(a *attack) []*corev1.Pod {
			return []*corev1.Pod{
				a.pod("default", "ok", "2", nil),
				a.pod("default", "a/b", "2", nil),
				a.pod("default/a", "b", "3", nil),
				a.pod("default", "../../etc", "4", nil),
				a.pod("default", "..", "4", nil),
				a.pod("Default", "upper", "4", nil),
			}
		},
		events: func(a *attack) []watchEvent {
			return []watchEvent{
				{"ADDED", a.pod("default/a", "b", "6", nil)},
				{"DELETED", a.pod("default", "a/b", "7", nil)},
				{"ADDED", a.pod("default", "a%2Fb", "8", nil)},
				{"DELETED", a.pod("default", "../ok", "9", nil)},
			}
		},
		last: func(a *attack) *corev1.Pod { return a.pod("default", "last", "10", nil) },
	}
	runFeed(t, informer.FactoryOptions{}, feed, func(a *attack, h *told) {
		require.ElementsMatch(t, []string{"default/ok", "default/last"}, a.cacheKeys(), "the cache")
		require.ElementsMatch(t, []string{"default/ok", "default/last"}, h.all(), "what the handler was told of")
		a.waitErr(reflector.KindRefused, reflector.ErrInvalidName)
	})
}
