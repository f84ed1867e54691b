package fifohook

// SetInline gives q, a *deltafifo.Queue that no write has reached yet, a
// consumer that applies writes itself while the queue is idle. process is
// the consumer's func(deltafifo.Batch) error, the function its Pops are
// given; ok, if not nil, is asked before each write, and false queues that
// write as usual. deltafifo/inline.go says what the hand-off does and what
// process must obey.
//
// Its parameters are untyped because deltafifo's types cannot be named
// here (deltafifo imports this package); it panics if they are not a
// *deltafifo.Queue and a func(deltafifo.Batch) error, which only a bug in
// this module could cause.
var SetInline func(q any, process any, ok func() bool)

// Inline calls SetInline if package deltafifo set it. It always does, unless
// deltafifo/inline.go was deleted (as its header allows): then the queue has
// no hand-off, and Inline does nothing.
func Inline(q any, process any, ok func() bool) {
	if SetInline != nil {
		SetInline(q, process, ok)
	}
}
