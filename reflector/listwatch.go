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
}

// List calls ListFunc.
func (lw *ListWatch) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListFunc(ctx, opts)
}

// Watch calls WatchFunc.
func (lw *ListWatch) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchFunc(ctx, opts)
}

// SupportsWatchList tells the reflector whether WatchFunc honours
// sendInitialEvents (see NoWatchList).
func (lw *ListWatch) SupportsWatchList() bool { return !lw.NoWatchList }
