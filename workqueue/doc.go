// Package workqueue is the queue between an informer's handlers and a
// controller's workers: handlers add keys, workers take them, read the
// latest state from a lister and write through the API server.
//
//	informer --handler: Add(key)--> Queue --Get--> worker --> lister (read), client (write)
//	                                  ^                |
//	                                  +-- AddRateLimited (failed) / Forget (done) + Done
//
// # Why a queue of keys
//
// A handler that did the work itself would stall the informer's delivery,
// and would act on the object of the event, which may be stale by the time
// the work runs. A handler that only adds "namespace/name" is instant, and
// the worker reads the object when it starts, so it always acts on the
// newest state the cache has.
//
// # Why deduplicate: the dirty set
//
// Ten updates of one object before a worker gets to it are one piece of
// work: the worker reads the latest state once. The queue keeps a dirty set,
// the items that need processing; adding an item that is already dirty does
// nothing. This is what lets a controller keep up with a burst: the queue
// holds at most one entry per object, however many events arrive.
//
// # Why a processing set
//
// Two workers must never handle one object at once: both would read the
// same state and race to write. Get moves an item from dirty to processing
// and no other worker gets it until Done. An item added meanwhile is dirty
// again but waits: Done puts it back, so the change that arrived during
// processing is handled by a second pass, never lost and never concurrent.
// In the code the two sets are one hash table from item to its state
// (dirty, processing, or both), so that each Add, Get and Done finds an item
// once; the item is hashed before the queue's lock is taken, so that workers
// contending for the lock wait for a probe, not for a hash (states.go).
//
// # Why a worker that finds the lock held sleeps
//
// Every Add, Get and Done takes the queue's one lock for a few probes. When
// workers on two CPUs both want it, spinning for it (as sync.Mutex does
// first) keeps both CPUs in the queue and moves its data between their
// caches on every op. The queue's lock (lock.go) puts such a worker to
// sleep at once; the worker that unlocks wakes it onto its own CPU, so the
// contending workers take turns on one CPU with the data in its cache, and
// the other CPU stays free for the work between Get and Done. That made
// the queue cheaper than client-go's with 8 and 64 workers, where it had
// been dearer (docs/controller.md).
//
// # Why rate-limit requeues
//
// A worker that fails (a conflict, a server error) calls AddRateLimited so
// the item comes back later, and Forget when the item finally succeeds.
// Retrying at once would hammer a server that is already in trouble. The
// default limiter backs off per item (5ms, 10ms, 20ms ... up to 1000s), so
// one broken object costs little, and holds all retries together to 10 per
// second (bursts of 100), so a thousand objects failing at once do not
// become a thousand requests per second. These are client-go's defaults.
//
// # Delays without goroutines
//
// AddAfter keeps delayed items in one min-heap by due time with one timer
// for the earliest, and an index so that an item waits at most once (the
// earlier due time wins). There is no goroutine per item, nor a goroutine of
// the queue's own.
//
// # Priorities
//
// When a controller starts, its informers deliver every existing object as
// an add: thousands of keys with nothing new about them. A change a user
// made a second ago should not wait behind them. AddWithPriority takes a
// priority; items of a higher priority are handed out first, and informer's
// EnqueueKeys adds the initial list at PriorityLow. An item added again at a
// higher priority moves up.
//
// # Stopping
//
// ShutDown refuses new items and drops delayed ones; Get hands out what is
// ready, then tells every worker to stop. ShutDownWithDrain also waits until
// every item in hand is Done, or until a ShutDown says not to wait.
//
// Stats reports depth, adds, retries and how long items have been in hand,
// with the meanings of client-go's workqueue metrics, for you to export.
// The running times are measured from the first call to Stats on: until
// something asks, Get does not read the clock.
package workqueue
