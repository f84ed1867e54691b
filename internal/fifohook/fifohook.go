// Package fifohook lets package informer turn on deltafifo's inline
// hand-off (deltafifo/inline.go) without it being part of deltafifo's API:
// no other module can import an internal package. It is a link and holds
// no state of its own: package deltafifo fills SetInline in when it is
// initialised, and never changes it.
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
