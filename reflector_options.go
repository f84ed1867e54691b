package informer

import "github.com/seed31a95821/informer/reflector"

// ReflectorOptions tune an informer's list-and-watch machinery: page size,
// backoff, WatchList, the watchdog. They are reflector.Tunables, the part of
// reflector.Options the informer leaves to its user (it sets the rest
// itself: ExpectedType is T, ResyncPeriod and ShouldResync carry the
// handlers' resyncs, OnError is Options.OnError, Name is Options.Name).
// Each field is documented there; the zero value is ready to use.
type ReflectorOptions = reflector.Tunables
