// Package reconcile runs a controller's workers: N goroutines that take
// keys from a workqueue.Queue and call your Reconcile function, with the
// bookkeeping every controller writes by hand otherwise.
//
//	informer --EnqueueKeys--> workqueue.Queue --Get--> Loop worker --Gate.Admit--> Reconcile(ctx, key)
//	                               ^                                                   |
//	                               +-------------- AddRateLimited / AddAfter / Add ----+
//
// What happens to a key is decided in two places: whether it is
// reconciled at all by the Gate (Loop.process), and what comes after
// Reconcile by Loop.finish:
//
//	the key                                            the loop
//	not admitted by the Gate (a shard held elsewhere)  Forget: the gate parked it and gives it back
//	Reconcile: nil error, zero Result                  Forget: its retry backoff starts over
//	Reconcile: nil error, RequeueAfter d               Forget, then AddAfter(key, d)
//	Reconcile: an error                                AddRateLimited (per-key exponential backoff), OnError
//	Reconcile: an error after its ctx ended (cut)      Add, counted in Stats.Cut: no backoff, no OnError
//	Reconcile: a panic                                 recovered, counted, then as an error
//
// # Behind leader election or shards
//
// A Gate admits each key the worker takes, and may make it wait: a warm
// standby's worker waits in Admit for its term, holding the key. An
// admitted key is reconciled under a context that ends when the loop's
// does or the term does, whichever is first, and the worker leaves the
// term when Reconcile returns, so a term (and with it the lease) is
// handed over only after the reconciles in it have returned. No
// reconcile starts outside a term: admission is per key, not once.
//
//	loop := &reconcile.Loop{Queue: q, Reconcile: r, Gate: &gate}  // var gate leaderelection.Gate; OnStartedLeading: gate.Lead
//	loop := &reconcile.Loop{Queue: q, Reconcile: r, Gate: coord}  // coord, _ := sharding.New(sharding.Options{Queue: q, ...})
//
// A reconcile cut by the end of its term goes back to this replica's
// queue, where the Gate holds it (until the next term, or parks it until
// the shard comes back). The replica that takes over needs nothing from
// this one: as a warm standby its informers enqueued the key too, and it
// reconciles the key from its own queue. A reconcile that finished
// despite the term's end is filed as usual.
//
// Run blocks until its context ends, then shuts the queue down with
// ShutDownWithDrain: the keys already handed out are finished, never cut
// in half; the keys still waiting (and behind a Gate, those not yet
// admitted) are dropped, never reconciled under an ended context; and Run
// returns when every worker has stopped. A Gate's error stops the loop
// the same way and Run returns it. The loop itself starts no goroutine
// but its workers, and no worker outlives Run.
package reconcile
