package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Optional methods. A ListerWatcher, or a watch.Interface it returns, may
// have these methods to tell the reflector more than the two required verbs
// can. The reflector looks for them with a type assertion and works
// without them; the HTTP implementation in reflector/wire has them all.
// The interfaces are unexported because nothing but the reflector needs to
// name them: an implementation only needs the method.

// watchListSupport is a ListerWatcher that knows whether its server
// supports WatchList (sendInitialEvents). In WatchListAuto mode the
// reflector skips WatchList when SupportsWatchList returns false, instead
// of finding out by waiting for a bookmark that never comes. In-memory
// fakes that ignore sendInitialEvents should return false.
type watchListSupport interface {
	SupportsWatchList() bool
}

// bytesCounter is a ListerWatcher that counts the bytes it decoded, lists
// and watches together, since it was created. The reflector reports the
// figure as Stats.BytesDecoded. BytesDecoded must be safe for concurrent
// use.
type bytesCounter interface {
	BytesDecoded() int64
}

// scoped is a ListerWatcher that says which part of the resource it asks
// the server for: the namespace ("" for all) and the label and field
// selectors it sends with every request. The reflector refuses any object
// outside that part (scope.go). A ListerWatcher without the method is
// trusted to send only what it should.
type scoped interface {
	Scope() (namespace, labelSelector, fieldSelector string)
}

// streamError is a watch.Interface that can say why its result channel
// closed. Err is called only after the channel is closed: nil means a
// normal end (the server's timeout, or Stop); an error means the stream
// broke (a cut connection, a malformed frame), and is reported and
// classified like any other. Without it, every close looks normal.
type streamError interface {
	Err() error
}

// itemCapLister is a ListerWatcher that can refuse a list page holding
// more than maxItems objects before it decodes a single one. The
// reflector's own cap (Options.MaxListItems) counts decoded objects, and
// a page's memory goes in decoding it: a few bytes of "{}," each become a
// whole object. So the reflector lists through ListAtMost when it can,
// with the room left under the cap, and files a refusal under
// ErrListTooLarge like its own. A refusal is recognised by a method on
// the error (errors.As to tooManyItems), since an implementation need not
// import this package.
type itemCapLister interface {
	ListAtMost(ctx context.Context, opts metav1.ListOptions, maxItems int) (runtime.Object, error)
}

// tooManyItems is the mark of an itemCapLister's refusal: an error in the
// chain whose TooManyItems method returns true.
type tooManyItems interface {
	TooManyItems() bool
}
