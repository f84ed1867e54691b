package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ListerWatcher is the reflector's view of the API server: the two read verbs
// of one resource, already scoped (namespace, label and field selectors) by
// whoever built it.
//
// The HTTP implementation lives in the reflector/wire package; tests drive the
// reflector with in-memory implementations (ListWatch turns two functions
// into one). An implementation may also have the optional methods of
// capabilities.go: SupportsWatchList() bool, BytesDecoded() int64 and
// ListAtMost, and Err() error on the watches it returns.
//
// Both methods must return promptly once ctx is done, and a returned watch
// must close its result channel when ctx is done or Stop is called: that is
// what lets Reflector.Run return with nothing left running.
type ListerWatcher interface {
	// List returns one page of the resource as a list object (for example
	// *corev1.PodList). The reflector pages with opts.Limit and opts.Continue
	// and reads the list's resourceVersion through meta.ListAccessor.
	List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	// Watch opens a stream of events after opts.ResourceVersion. The stream
	// ends when ctx is done, when Stop is called, or when the server closes it.
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}
