package reflector_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/reflector"
)

// printStore is a Store that prints what the reflector tells it, and stops
// the example at the first bookmark.
type printStore struct{ stop context.CancelFunc }

func (s printStore) Add(obj runtime.Object) error {
	fmt.Println("add", obj.(*corev1.Pod).Name)
	return nil
}
func (s printStore) Update(obj runtime.Object) error {
	fmt.Println("update", obj.(*corev1.Pod).Name)
	return nil
}
func (s printStore) Delete(obj runtime.Object) error {
	fmt.Println("delete", obj.(*corev1.Pod).Name)
	return nil
}
func (s printStore) Replace(list []runtime.Object, rv string) error {
	fmt.Printf("replace with %d pods at resourceVersion %s\n", len(list), rv)
	return nil
}
func (s printStore) Resync() error { return nil }
func (s printStore) Bookmark(rv string) error {
	fmt.Println("bookmark at", rv)
	s.stop()
	return nil
}

func newPod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// A reflector fed by an in-memory ListerWatcher: it lists (two pods at
// resourceVersion 10), then watches from 10 and applies each event.
func Example() {
	lw := &reflector.ListWatch{
		ListFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			fmt.Printf("list at resourceVersion %q\n", opts.ResourceVersion)
			return &corev1.PodList{
				ListMeta: metav1.ListMeta{ResourceVersion: "10"},
				Items:    []corev1.Pod{*newPod("a", "4"), *newPod("b", "9")},
			}, nil
		},
		WatchFunc: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			fmt.Printf("watch from resourceVersion %q\n", opts.ResourceVersion)
			w := watch.NewRaceFreeFake()
			w.Add(newPod("c", "11"))
			w.Modify(newPod("a", "12"))
			w.Delete(newPod("b", "13"))
			w.Action(watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "14"}})
			return w, nil
		},
		NoWatchList: true, // these funcs ignore sendInitialEvents
	}

	ctx, cancel := context.WithCancel(context.Background())
	r := reflector.New(lw, printStore{stop: cancel}, reflector.Options{ExpectedType: &corev1.Pod{}})
	_ = r.Run(ctx) // returns once the store cancels ctx

	s := r.Stats()
	fmt.Println("last resourceVersion:", r.LastSyncResourceVersion())
	fmt.Println("lists:", s.Lists, "watches:", s.Watches, "events:", s.Events[watch.Added]+s.Events[watch.Modified]+s.Events[watch.Deleted])
	// Output:
	// list at resourceVersion "0"
	// replace with 2 pods at resourceVersion 10
	// watch from resourceVersion "10"
	// add c
	// update a
	// delete b
	// bookmark at 14
	// last resourceVersion: 14
	// lists: 1 watches: 1 events: 3
}

// The Kind of every reported error says what the reflector will do about it.
func ExampleKindOf() {
	r := reflector.New(&reflector.ListWatch{}, printStore{}, reflector.Options{})
	_ = r // errors reach Options.OnError as *reflector.Error
	err := &reflector.Error{Reflector: "pods", Op: "watch", Kind: reflector.KindExpired, Err: fmt.Errorf("410")}
	fmt.Println(reflector.KindOf(err))
	fmt.Println(err)
	// Output:
	// Expired
	// reflector pods: watch: Expired: 410
}

// A ListerWatcher says which part of the resource it serves (Namespace,
// LabelSelector, FieldSelector: its Scope), and the reflector refuses
// whatever a server sends outside it, and any name no real object can
// have: reported as KindRefused, never stored.
func ExampleListWatch_Scope() {
	inScope := newPod("a", "4")
	inScope.Labels = map[string]string{"app": "web"}
	otherNamespace := newPod("b", "5")
	otherNamespace.Namespace, otherNamespace.Labels = "kube-system", inScope.Labels
	unlabelled := newPod("c", "6")
	collides := newPod("d/e", "7") // its key, default/d/e, is also pod e's of namespace default/d
	collides.Labels = inScope.Labels

	ctx, cancel := context.WithCancel(context.Background())
	lw := &reflector.ListWatch{
		Namespace: "default", LabelSelector: "app=web",
		ListFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{
				ListMeta: metav1.ListMeta{ResourceVersion: "10"},
				Items:    []corev1.Pod{*inScope, *otherNamespace, *unlabelled, *collides},
			}, nil
		},
		WatchFunc: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			cancel() // the example ends with the list
			return watch.NewEmptyWatch(), nil
		},
		NoWatchList: true,
	}
	r := reflector.New(lw, printStore{stop: cancel}, reflector.Options{
		ExpectedType: &corev1.Pod{},
		OnError: func(err error) {
			fmt.Println(reflector.KindOf(err), errors.Is(err, reflector.ErrOutOfScope), errors.Is(err, reflector.ErrInvalidName))
		},
	})
	_ = r.Run(ctx)
	fmt.Println("refused:", r.Stats().Errors[reflector.KindRefused])
	// Output:
	// Refused true false
	// Refused true false
	// Refused false true
	// replace with 1 pods at resourceVersion 10
	// refused: 3
}
