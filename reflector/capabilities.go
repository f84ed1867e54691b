package reflector

// Optional interfaces. A ListerWatcher, or a watch.Interface it returns, may
// implement these to tell the reflector more than the two required verbs
// can. The reflector checks for them with a type assertion and works
// without them; the HTTP implementation in reflector/wire implements them.

// WatchListSupport is implemented by a ListerWatcher that knows whether its
// server supports WatchList (sendInitialEvents). In WatchListAuto mode the
// reflector skips WatchList when SupportsWatchList returns false, instead of
// finding out by waiting for a bookmark that never comes. In-memory fakes
// that ignore sendInitialEvents should return false.
type WatchListSupport interface {
	SupportsWatchList() bool
}

// BytesCounter is implemented by a ListerWatcher that counts the bytes it
// decoded, lists and watches together, since it was created. The reflector
// reports the figure as Stats.BytesDecoded. BytesDecoded must be safe for
// concurrent use.
type BytesCounter interface {
	BytesDecoded() int64
}

// StreamError is implemented by a watch.Interface that can say why its
// result channel closed. Err is called only after the channel is closed: nil
// means a normal end (the server's timeout, or Stop); an error means the
// stream broke (a cut connection, a malformed frame), and is reported and
// classified like any other. Without it, every close looks normal.
type StreamError interface {
	Err() error
}
