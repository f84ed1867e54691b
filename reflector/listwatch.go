package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ListWatch is a ListerWatcher made of two functions: the quickest way to
// feed a reflector from something that is not an API server (a test, a
// cache, another client). It is safe for concurrent use if its functions
// are.
type ListWatch struct {
	// ListFunc implements List.
	ListFunc func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	// WatchFunc implements Watch.
	WatchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// NoWatchList, when true, tells the reflector (through
	// SupportsWatchList) that WatchFunc ignores sendInitialEvents, so that
	// WatchListAuto lists instead.
	NoWatchList bool

	// Namespace, LabelSelector and FieldSelector say which part of the
	// resource ListFunc and WatchFunc serve (through Scope): the
	// reflector refuses any object outside it (ErrOutOfScope). They are
	// not passed to the functions, which are scoped already. Empty: all.
	Namespace, LabelSelector, FieldSelector string
}

// List calls ListFunc.
func (lw *ListWatch) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListFunc(ctx, opts)
}

// Watch calls WatchFunc.
func (lw *ListWatch) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchFunc(ctx, opts)
}

// Scope tells the reflector which part of the resource the functions
// serve: Namespace, LabelSelector and FieldSelector.
func (lw *ListWatch) Scope() (namespace, labelSelector, fieldSelector string) {
	return lw.Namespace, lw.LabelSelector, lw.FieldSelector
}

// SupportsWatchList tells the reflector whether WatchFunc honours
// sendInitialEvents (see NoWatchList).
func (lw *ListWatch) SupportsWatchList() bool { return !lw.NoWatchList }
