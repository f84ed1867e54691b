// Package fifohook lets package informer turn on deltafifo's inline
// hand-off (deltafifo/inline.go) without it being part of deltafifo's API:
// no other module can import an internal package. It is a link and holds
// no state of its own: package deltafifo fills SetInline in when it is
// initialised, and never changes it.
package fifohook
