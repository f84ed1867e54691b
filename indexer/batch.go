package indexer

import "k8s.io/apimachinery/pkg/runtime"

// Batch makes writes under one hold of the Indexer's write lock, for a
// writer that has many at once: an informer applying a batch of deltas
// pays one lock round trip for the batch instead of one per object, as
// client-go's informers do with their store's transactions since 0.35.
//
// A batch is not a transaction: each write is visible to readers as soon
// as it is made, and one that fails changes nothing but does not undo the
// others. Delete this file and the informer's use of it, and everything
// still works, one lock round trip per write slower.
//
// A Batch is valid only inside the function given to Indexer.Batch.
type Batch struct{ x *Indexer }

// Batch calls write with a Batch, holding the write lock until write
// returns. write must not call the Indexer's own write methods (Add,
// Update, Swap, Delete, Replace, AddIndexers, SetResourceVersion): they
// would wait for the lock it holds. Reads are fine.
func (x *Indexer) Batch(write func(Batch)) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	write(Batch{x: x})
}

// Swap is Indexer.Swap inside the batch.
func (b Batch) Swap(key string, obj runtime.Object) (old runtime.Object, existed bool, err error) {
	if err := checkItem(key, obj); err != nil {
		return nil, false, err
	}
	return b.x.putLocked(key, obj)
}

// Delete is Indexer.Delete inside the batch.
func (b Batch) Delete(key string) error { return b.x.deleteLocked(key) }
