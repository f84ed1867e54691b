package deltafifo_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/deltafifo"
)

func newPod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: rv}}
}

// cache stands in for the indexer: the consumer applies batches to it, and
// the queue reads it as its KnownObjects. (It is used from one goroutine
// here; a real one must be safe for concurrent use.)
type cache map[string]runtime.Object

func (c cache) ListKeys() []string { return slices.Sorted(maps.Keys(c)) }
func (c cache) Get(key string) (runtime.Object, bool) {
	o, ok := c[key]
	return o, ok
}

// apply is a minimal consumer: deltas in order, a relist as a swap.
func (c cache) apply(b deltafifo.Batch) {
	if b.Relist {
		clear(c)
	}
	for _, it := range b.Items {
		for _, d := range it.Deltas {
			if d.Type == deltafifo.Deleted {
				delete(c, it.Key)
			} else {
				c[it.Key] = d.Object
			}
		}
	}
}

// show prints one batch on one line.
func show(b deltafifo.Batch) {
	var words []string
	if b.Relist {
		words = append(words, "relist")
	}
	for _, it := range b.Items {
		words = append(words, it.Key+":")
		for _, d := range it.Deltas {
			p := d.Object.(*corev1.Pod)
			if d.FinalStateUnknown {
				words = append(words, "Tombstone("+p.ResourceVersion+")")
			} else {
				words = append(words, string(d.Type)+"("+p.ResourceVersion+")")
			}
		}
	}
	if b.ResourceVersion != "" {
		words = append(words, "rv="+b.ResourceVersion)
	}
	fmt.Println(strings.Join(words, " "))
}

// The deltas of one key are delivered together, in the order the key first
// arrived; consecutive updates are compacted into the newest.
func Example() {
	q := deltafifo.New(deltafifo.Options{})
	_ = q.Add(newPod("web", "1"))
	_ = q.Add(newPod("db", "2"))
	_ = q.Update(newPod("web", "3"))
	_ = q.Update(newPod("web", "4"))
	_ = q.Delete(newPod("db", "5"))

	ctx := context.Background()
	for range 2 {
		_ = q.Pop(ctx, func(b deltafifo.Batch) error {
			show(b)
			return nil
		})
	}
	// Output:
	// shop/web: Added(1) Updated(4)
	// shop/db: Added(2) Deleted(5)
}

// A relist states the whole truth at a resourceVersion. Objects the
// consumer holds that the list lacks were deleted while nobody watched:
// they get a tombstone carrying the last state the consumer knew.
func ExampleQueue_Replace() {
	known := cache{}
	q := deltafifo.New(deltafifo.Options{KnownObjects: known})
	_ = q.Replace([]runtime.Object{newPod("web", "1"), newPod("db", "1")}, "1")
	pop(q, known, 3) // web, db, and the marker carrying rv 1
	fmt.Println("synced:", q.HasSynced())

	// The watch broke; "db" was deleted meanwhile. The relist finds out.
	_ = q.Replace([]runtime.Object{newPod("web", "7")}, "9")
	pop(q, known, 3)
	fmt.Println("cache:", known.ListKeys())
	// Output:
	// shop/web: Replaced(1)
	// shop/db: Replaced(1)
	// rv=1
	// synced: true
	// shop/web: Replaced(7)
	// shop/db: Tombstone(1)
	// rv=9
	// cache: [shop/web]
}

// With AtomicRelist a relist arrives as one batch, tombstones first, so
// the consumer can swap its whole state at once. Deltas queued before the
// relist come before it; deltas queued after come after.
func ExampleOptions_atomicRelist() {
	known := cache{"shop/db": newPod("db", "1")}
	q := deltafifo.New(deltafifo.Options{KnownObjects: known, AtomicRelist: true})
	_ = q.Update(newPod("db", "2"))
	_ = q.Replace([]runtime.Object{newPod("web", "5")}, "5")
	_ = q.Add(newPod("cart", "6"))
	pop(q, known, 3)
	fmt.Println("cache:", known.ListKeys())
	// Output:
	// shop/db: Updated(2)
	// relist shop/db: Tombstone(2) shop/web: Replaced(5) rv=5
	// shop/cart: Added(6)
	// cache: [shop/cart shop/web]
}

// PopBatch hands over several keys at once; a bookmark right after them
// becomes the batch's ResourceVersion: once the batch is applied, the
// consumer is at that version.
func ExampleQueue_PopBatch() {
	q := deltafifo.New(deltafifo.Options{})
	for i, name := range []string{"a", "b", "c"} {
		_ = q.Add(newPod(name, fmt.Sprint(i+1)))
	}
	_ = q.Bookmark("10")
	_ = q.PopBatch(context.Background(), 100, func(b deltafifo.Batch) error {
		show(b)
		return nil
	})
	// Output:
	// shop/a: Added(1) shop/b: Added(2) shop/c: Added(3) rv=10
}

// pop pops n batches, applying each to known and printing it.
func pop(q *deltafifo.Queue, known cache, n int) {
	for range n {
		_ = q.Pop(context.Background(), func(b deltafifo.Batch) error {
			known.apply(b)
			show(b)
			return nil
		})
	}
}
