package indexer

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestReadersSeeConsistentSnapshots runs readers against a writer that never
// stops moving pods between namespaces, labels and nodes, and replaces or
// re-indexes everything from time to time. Every snapshot a reader takes must
// be consistent with itself: each object is filed exactly where its metadata
// says, and the buckets add up to the total. Run with -race, it also proves
// that readers never touch memory the writer is editing.
func TestReadersSeeConsistentSnapshots(t *testing.T) {
	defer goleak.VerifyNone(t)
	seed := testSeed(t)
	x := New(Indexers{"node": byNode})
	var (
		stop    atomic.Bool
		checked atomic.Int64
		wg      sync.WaitGroup
	)
	for r := range 4 {
		wg.Go(func() {
			for !stop.Load() {
				if err := checkConsistent(x.Freeze()); err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				// A Read view does not freeze the version: the writer
				// must copy what it changes while the view is in use,
				// and only then edit in place again.
				var err error
				x.Read(func(s Snapshot) { err = checkConsistent(s) })
				if err != nil {
					t.Errorf("reader %d, Read: %v", r, err)
					return
				}
				// The one-call reads must not fail either.
				_, _ = x.ByIndex(NamespaceIndex, "ns1")
				_ = x.List()
				_, _ = x.Get("ns1/p1")
				checked.Add(1)
			}
		})
	}

	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	for n := 0; n < 3000 || checked.Load() < 50; n++ {
		switch {
		case n%500 == 499:
			require.NoError(t, x.Replace(randomItems(rng, 20), fmt.Sprint(n)))
		case n == 1000:
			require.NoError(t, x.AddIndexers(Indexers{"container": byContainer}))
		case n == 1500:
			// Until now the readers' label checks were answered by scanning
			// (see Snapshot.scansLabels), which cannot disagree with the
			// objects; from now on they read label buckets the writer keeps.
			require.NoError(t, x.UseLabelIndex())
		case rng.IntN(4) == 0:
			require.NoError(t, x.Delete(fmt.Sprintf("k%d", rng.IntN(40))))
		default:
			p := randomPod(rng)
			p.Spec.NodeName = fmt.Sprintf("n%d", rng.IntN(5)) // never failing
			require.NoError(t, x.Update(fmt.Sprintf("k%d", rng.IntN(40)), p))
		}
	}
	stop.Store(true)
	wg.Wait()
}

func randomItems(rng *rand.Rand, n int) map[string]runtime.Object {
	items := map[string]runtime.Object{}
	for i := range n {
		p := randomPod(rng)
		p.Spec.NodeName = "n1"
		items[fmt.Sprintf("k%d", i)] = p
	}
	return items
}

// checkConsistent verifies that a snapshot's indexes agree with its objects.
func checkConsistent(s Snapshot) error {
	total := 0
	namespaces, err := s.IndexValues(NamespaceIndex)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		seq, _ := s.Indexed(NamespaceIndex, ns)
		for key, obj := range seq {
			if got := obj.(*corev1.Pod).Namespace; got != ns {
				return fmt.Errorf("%s filed under namespace %q but is in %q", key, ns, got)
			}
			total++
		}
	}
	if total != s.Len() {
		return fmt.Errorf("namespace buckets hold %d keys, the store %d", total, s.Len())
	}
	for key, obj := range s.All() {
		for k, v := range obj.(*corev1.Pod).Labels {
			if !filedUnder(s, LabelIndex, LabelIndexValue(k, v), key) {
				return fmt.Errorf("%s is not filed under its label %s=%s", key, k, v)
			}
		}
		if node := obj.(*corev1.Pod).Spec.NodeName; node != "" && !filedUnder(s, "node", node, key) {
			return fmt.Errorf("%s is not filed under its node %s", key, node)
		}
	}
	return nil
}

func filedUnder(s Snapshot, index, value, key string) bool {
	seq, err := s.Indexed(index, value)
	if err != nil {
		return false
	}
	for k := range seq {
		if k == key {
			return true
		}
	}
	return false
}

// TestWriterNeverWaitsForAReader pauses a reader in the middle of walking a
// namespace, and requires that every kind of write still completes. An
// indexer that held a read lock for the length of a read (as client-go's
// ThreadSafeStore does) would block the writer here until the reader let go.
func TestWriterNeverWaitsForAReader(t *testing.T) {
	defer goleak.VerifyNone(t)
	x := New(nil)
	for i := range 100 {
		p := pod("a", fmt.Sprintf("p%d", i), "app=web", "")
		require.NoError(t, x.Add(keyOf(p), p))
	}

	paused, release, done := make(chan struct{}), make(chan struct{}), make(chan int)
	go func() {
		seq, _ := x.Freeze().Indexed(NamespaceIndex, "a")
		n := 0
		for range seq {
			if n == 0 {
				close(paused)
				<-release // hold the walk open while the writer works
			}
			n++
		}
		done <- n
	}()
	<-paused

	writes := make(chan struct{})
	go func() {
		defer close(writes)
		for i := range 1000 {
			p := pod("a", fmt.Sprintf("p%d", i%150), "app=api", "")
			if err := x.Update(keyOf(p), p); err != nil {
				t.Error(err)
			}
			_ = x.Delete(fmt.Sprintf("a/p%d", (i*7)%150))
			_, _ = x.ByIndex(NamespaceIndex, "a") // other readers keep reading too
		}
		x.SetResourceVersion("99")
		if err := x.AddIndexers(Indexers{"container": byContainer}); err != nil {
			t.Error(err)
		}
		if err := x.Replace(nil, "100"); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-writes:
	case <-time.After(30 * time.Second):
		t.Fatal("writes did not complete while a reader was paused")
	}
	require.Zero(t, x.Len())
	close(release)
	require.Equal(t, 100, <-done, "the paused reader finishes its own snapshot, untouched")
}

// TestGetRacesWithUpdates: a Get that runs alongside Updates of the same key
// returns one of the versions written, never a torn or missing object.
func TestGetRacesWithUpdates(t *testing.T) {
	defer goleak.VerifyNone(t)
	x := New(Indexers{"node": byNode})
	versions := make([]*corev1.Pod, 50)
	known := map[runtime.Object]bool{}
	for i := range versions {
		versions[i] = pod("a", "p", fmt.Sprintf("v=%d", i), fmt.Sprintf("n%d", i%3))
		known[versions[i]] = true
	}
	require.NoError(t, x.Add("a/p", versions[0]))
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	for range 3 {
		wg.Go(func() {
			for !stop.Load() {
				obj, ok := x.Get("a/p")
				if !ok || !known[obj] {
					t.Errorf("Get returned %v, %v", obj, ok)
					return
				}
			}
		})
	}
	for i := range 20_000 {
		require.NoError(t, x.Update("a/p", versions[i%len(versions)]))
	}
	stop.Store(true)
	wg.Wait()
}

// A Read view must not change while f runs, whatever the writer does
// meanwhile, although it did not freeze the version: the writer copies
// what it changes while a Read is in progress.
func TestReadViewStaysWhileWritesGoOn(t *testing.T) {
	x := New(Indexers{"node": byNode})
	for i := range 200 {
		p := pod(fmt.Sprintf("ns%d", i%4), fmt.Sprintf("p%d", i), "app=a", "n1")
		require.NoError(t, x.Add(keyOf(p), p))
	}
	x.Read(func(s Snapshot) {
		before := viewOf(t, s)
		wrote := make(chan error, 1)
		go func() {
			var errs []error
			for i := range 200 {
				p := pod(fmt.Sprintf("ns%d", i%4), fmt.Sprintf("p%d", i), "app=b", "n2")
				errs = append(errs, x.Update(keyOf(p), p))
				if i%3 == 0 {
					errs = append(errs, x.Delete(fmt.Sprintf("ns%d/p%d", i%4, i)))
				}
			}
			p := pod("ns9", "new", "", "n3")
			wrote <- errors.Join(append(errs, x.Add(keyOf(p), p))...)
		}()
		require.NoError(t, <-wrote) // the writer never waits for the reader
		require.Equal(t, before, viewOf(t, s), "the view changed under the reader")
		require.NoError(t, checkConsistent(s))
	})
	require.Equal(t, 200-67+1, x.Len(), "the writes happened")
}

// viewOf lists what a view holds: every key with its node and app, and the
// keys filed under node n1.
func viewOf(t *testing.T, s Snapshot) []string {
	t.Helper()
	var out []string
	for key, obj := range s.All() {
		p := obj.(*corev1.Pod)
		out = append(out, key+" "+p.Spec.NodeName+" "+p.Labels["app"])
	}
	keys, err := s.indexKeys("node", "n1")
	require.NoError(t, err)
	slices.Sort(out)
	slices.Sort(keys)
	return append(out, keys...)
}
