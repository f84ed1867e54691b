package informer_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
)

// Two watch faults seen from a handler: the reflector's scripts
// (reflector/testdata/rv_backwards.txt, store_read_error.txt) show the
// machine's side; these show what reaches the cache and the handlers.

// scriptedLW answers the i-th List with lists[i] (the last one again
// after that) and the i-th Watch with a watch carrying watches[i] (then an
// idle one), and records the resourceVersion of every List.
type scriptedLW struct {
	lists   []*corev1.PodList
	watches [][]watch.Event

	mu      sync.Mutex // guards listRVs and nWatch
	listRVs []string
	nWatch  int
}

func (l *scriptedLW) lw() *reflector.ListWatch {
	return &reflector.ListWatch{
		NoWatchList: true,
		ListFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.listRVs = append(l.listRVs, opts.ResourceVersion)
			return l.lists[min(len(l.listRVs), len(l.lists))-1].DeepCopy(), nil
		},
		WatchFunc: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			var evs []watch.Event
			if l.nWatch < len(l.watches) {
				evs = l.watches[l.nWatch]
			}
			l.nWatch++
			w := watch.NewFakeWithChanSize(len(evs), false)
			for _, ev := range evs {
				w.Action(ev.Type, ev.Object)
			}
			return w, nil
		},
	}
}

func (l *scriptedLW) listed() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.listRVs...)
}

func rvPod(name, rv string) *corev1.Pod {
	p := pod("shop", name, nil)
	p.ResourceVersion = rv
	return p
}

func podList(rv string, pods ...*corev1.Pod) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// runScripted runs an informer of pods on lw until the test ends.
func runScripted(t *testing.T, lw reflector.ListerWatcher) (*informer.SharedInformer[*corev1.Pod], *errorLog) {
	t.Helper()
	errs := &errorLog{}
	inf := informer.New[*corev1.Pod](lw, informer.Options{
		Name: "pods", OnError: errs.add, Reflector: informer.ReflectorOptions{Backoff: fastRetry},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return inf, errs
}

// kindsOf names the Kind of each error, "?" for one that is no
// *reflector.Error.
func kindsOf(errs []error) []string {
	kinds := []string{}
	for _, err := range errs {
		var e *reflector.Error
		if !errors.As(err, &e) {
			kinds = append(kinds, "?")
			continue
		}
		kinds = append(kinds, e.Kind.String())
	}
	return kinds
}

// rvLog is a handler that writes down the resourceVersion of each pod it
// is told about, by name.
type rvLog struct {
	mu  sync.Mutex // guards rvs
	rvs map[string][]string
}

func (l *rvLog) note(p *corev1.Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rvs == nil {
		l.rvs = map[string][]string{}
	}
	l.rvs[p.Name] = append(l.rvs[p.Name], p.ResourceVersion)
}

func (l *rvLog) of(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.rvs[name]...)
}

func (l *rvLog) handler() informer.Handler[*corev1.Pod] {
	return informer.Handler[*corev1.Pod]{
		OnAdd:    func(p *corev1.Pod, _ bool) { l.note(p) },
		OnUpdate: func(_, p *corev1.Pod) { l.note(p) },
		OnDelete: func(p *corev1.Pod, _ bool) { l.note(p) },
	}
}

func TestInformerNeverTellsAnOlderResourceVersion(t *testing.T) {
	sl := &scriptedLW{
		lists: []*corev1.PodList{podList("10", rvPod("a", "5")), podList("13", rvPod("a", "12"), rvPod("b", "13"))},
		watches: [][]watch.Event{{
			{Type: watch.Modified, Object: rvPod("a", "12")},
			{Type: watch.Modified, Object: rvPod("a", "11")}, // older than 12: refused
		}},
	}
	inf, errs := runScripted(t, sl.lw())
	l := &rvLog{}
	_, err := inf.AddEventHandler(l.handler(), informer.HandlerOptions{})
	require.NoError(t, err)
	// b comes with the relist, which follows the refused event.
	require.Eventually(t, func() bool { return len(l.of("b")) > 0 }, waitFor, time.Millisecond)
	require.Equal(t, []string{"0", "12"}, sl.listed(), "the relist is made from the last good RV")
	require.NotContains(t, l.of("a"), "11", "the older version is never told")
	require.Equal(t, "12", l.of("a")[len(l.of("a"))-1])
	obj, ok := inf.Indexer().Get("shop/a")
	require.True(t, ok)
	require.Equal(t, "12", obj.(*corev1.Pod).ResourceVersion)
	require.Equal(t, []string{reflector.KindRVBackwards.String()}, kindsOf(errs.all()), "reported once")
}

func TestStoreReadErrorDropsTheObjectFromTheCache(t *testing.T) {
	storeRead := &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason:  metav1.StatusReasonStoreReadError,
		Message: "failed to prepare current and previous objects: corrupt object has been deleted",
	}
	sl := &scriptedLW{
		lists:   []*corev1.PodList{podList("3", rvPod("p1", "1"), rvPod("corrupt", "2")), podList("5", rvPod("p1", "1"))},
		watches: [][]watch.Event{{{Type: watch.Error, Object: storeRead}}},
	}
	inf, errs := runScripted(t, sl.lw())
	rec := &recorder{}
	_, err := inf.AddEventHandler(rec.handler(), informer.HandlerOptions{})
	require.NoError(t, err)
	rec.waitFor(t, "delete(unknown) corrupt")
	require.Equal(t, []string{"shop/p1"}, inf.Indexer().ListKeys())
	require.Equal(t, []string{"0", ""}, sl.listed(), "the relist is a consistent read")
	require.Equal(t, []string{reflector.KindStoreRead.String()}, kindsOf(errs.all()))
}
