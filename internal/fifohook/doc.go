// Package fifohook lets package informer turn on deltafifo's inline
// hand-off (deltafifo/inline.go) without it being part of deltafifo's API:
// no other module can import an internal package. Its one variable is a
// link, not configuration: package deltafifo sets it once, when it is
// initialised, and nothing changes it afterwards. (A link this way round
// is needed because only deltafifo's own code can reach a Queue's
// unexported fields, and the root package, not deltafifo, must decide.)
package fifohook
