// Package reconcile runs a controller's workers: N goroutines that take
// keys from a workqueue.Queue and call your Reconcile function, with the
// bookkeeping every controller writes by hand otherwise.
//
//	informer --EnqueueKeys--> workqueue.Queue --Get--> Loop worker --> Reconcile(ctx, key)
//	                               ^                                     |
//	                               +---- AddRateLimited / AddAfter ------+
//
// What happens to a key after Reconcile is decided in one place,
// Loop.finish:
//
//	Reconcile returns            the loop
//	nil error, zero Result       Forget: its retry backoff starts over
//	nil error, RequeueAfter d    Forget, then AddAfter(key, d)
//	an error                     AddRateLimited (per-key exponential backoff), OnError
//	a panic                      recovered, counted, then as an error
//
// Run blocks until its context ends, then shuts the queue down with
// ShutDownWithDrain: the keys already handed out are finished, never cut
// in half, and Run returns when every worker has stopped.
//
// A Gate delays the workers until they may work: a leader election, or
// the shards of a fleet, plug in there. The loop itself starts no
// goroutine but its workers, and no worker outlives Run.
package reconcile
