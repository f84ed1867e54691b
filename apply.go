package informer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/deltafifo"
	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/processor"
)

// apply is the heart of the informer: it makes the cache agree with a batch of
// deltas and tells the handlers what changed, in that order, so that a handler
// reading the lister always sees at least the state it is being told about.
func (s *SharedInformer[T]) apply(b deltafifo.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case b.Relist:
		s.applyRelist(b)
	case len(b.Items) == 1:
		s.applyItem(s.idx, b.Items[0])
	case len(b.Items) > 1:
		// One hold of the cache's write lock for the whole batch.
		s.idx.Batch(func(w indexer.Batch) {
			for _, it := range b.Items {
				s.applyItem(w, it)
			}
		})
	}
	if b.ResourceVersion != "" {
		s.idx.SetResourceVersion(b.ResourceVersion)
	}
	return nil
}

// cacheWriter is what apply writes a key's deltas to: the indexer itself,
// or a batch of writes under one hold of its lock (indexer.Batch).
type cacheWriter interface {
	Swap(key string, obj runtime.Object) (old runtime.Object, existed bool, err error)
	Delete(key string) error
}

// applyItem applies one key's deltas, oldest first.
func (s *SharedInformer[T]) applyItem(w cacheWriter, it deltafifo.Item) {
	for _, d := range it.Deltas {
		if !s.typeOK(it.Key, d.Object) {
			continue
		}
		if d.Type == deltafifo.Deleted {
			s.applyDelete(w, it.Key, d)
			continue
		}
		s.applyUpsert(w, it.Key, d, it.InInitialList)
	}
}

// applyUpsert handles Added, Updated, Replaced and Sync: whichever the delta
// says, what the handlers hear depends only on whether the cache already had
// the object.
func (s *SharedInformer[T]) applyUpsert(w cacheWriter, key string, d deltafifo.Delta, initial bool) {
	old, existed, err := w.Swap(key, d.Object)
	if err != nil {
		s.report(fmt.Errorf("informer %s: cache %q: %w", s.opts.Name, key, err))
		if initial {
			s.setUnfilled(key, true)
		}
		return
	}
	s.setUnfilled(key, false)
	if !existed {
		s.proc.Distribute(processor.Notification{Type: processor.Add, Key: key, Object: d.Object, InInitialList: initial}, false)
		return
	}
	s.proc.Distribute(processor.Notification{Type: processor.Update, Key: key, Object: d.Object, Old: old}, isResync(d, old))
}

// isResync tells a change from a re-delivery. A Sync delta is a periodic
// resync; a Replaced delta whose object has the resourceVersion the cache
// already holds is a relist that found nothing new. Both go only to the
// handlers whose resync period is due, which spares every other handler a
// storm of no-op updates after each relist.
func isResync(d deltafifo.Delta, old runtime.Object) bool {
	switch d.Type {
	case deltafifo.Sync:
		return true
	case deltafifo.Replaced:
		return sameResourceVersion(old, d.Object)
	default:
		return false
	}
}

func sameResourceVersion(a, b runtime.Object) bool {
	am, errA := meta.Accessor(a)
	bm, errB := meta.Accessor(b)
	if errA != nil || errB != nil {
		return false
	}
	rv := am.GetResourceVersion()
	return rv != "" && rv == bm.GetResourceVersion()
}

func (s *SharedInformer[T]) applyDelete(w cacheWriter, key string, d deltafifo.Delta) {
	if err := w.Delete(key); err != nil {
		s.report(fmt.Errorf("informer %s: uncache %q: %w", s.opts.Name, key, err))
		return
	}
	s.setUnfilled(key, false)
	s.proc.Distribute(processor.Notification{Type: processor.Delete, Key: key, Object: d.Object, FinalStateUnknown: d.FinalStateUnknown}, false)
}

// applyRelist swaps a whole relist into the cache at once. The queue puts the
// inferred deletions first; the new state is every listed object. After the
// swap, handlers hear the deletions, then the adds and updates.
func (s *SharedInformer[T]) applyRelist(b deltafifo.Batch) {
	type note struct {
		n    processor.Notification
		sync bool
	}
	next := make(map[string]runtime.Object, len(b.Items))
	notes := make([]note, 0, len(b.Items))
	for _, it := range b.Items {
		d := it.Deltas[len(it.Deltas)-1] // a relist carries one delta a key
		old, existed := s.idx.Get(it.Key)
		if !s.typeOK(it.Key, d.Object) {
			// Keep what the cache holds, as applyItem does: leaving it out
			// of next would drop it without telling the handlers.
			if existed {
				next[it.Key] = old
			}
			continue
		}
		switch {
		case d.Type == deltafifo.Deleted:
			notes = append(notes, note{n: processor.Notification{Type: processor.Delete, Key: it.Key, Object: d.Object, FinalStateUnknown: d.FinalStateUnknown}})
		case existed:
			next[it.Key] = d.Object
			notes = append(notes, note{n: processor.Notification{Type: processor.Update, Key: it.Key, Object: d.Object, Old: old}, sync: isResync(d, old)})
		default:
			next[it.Key] = d.Object
			notes = append(notes, note{n: processor.Notification{Type: processor.Add, Key: it.Key, Object: d.Object, InInitialList: it.InInitialList}})
		}
	}
	if err := s.idx.Replace(next, b.ResourceVersion); err != nil {
		s.report(fmt.Errorf("informer %s: relist: %w", s.opts.Name, err))
		for _, it := range b.Items {
			if it.InInitialList {
				s.setUnfilled(it.Key, true)
			}
		}
		return
	}
	clear(s.unfilled) // the cache holds a whole state now
	s.unfilledN.Store(0)
	for _, nt := range notes {
		s.proc.Distribute(nt.n, nt.sync)
	}
}

// typeOK guards the cache against objects of the wrong type, which a
// misbehaving server or a transform could produce: they are reported, never
// stored, so every reader can rely on the cache holding only T.
func (s *SharedInformer[T]) typeOK(key string, obj runtime.Object) bool {
	if _, ok := obj.(T); ok {
		return true
	}
	s.report(fmt.Errorf("informer %s: %q is a %T: %w", s.opts.Name, key, obj, ErrWrongType))
	return false
}

// setUnfilled records whether key, of the first state, is missing from the
// cache because a write of it failed (see markSyncedIfReady). Called with
// s.mu held.
func (s *SharedInformer[T]) setUnfilled(key string, missing bool) {
	switch {
	case missing:
		if s.unfilled == nil {
			s.unfilled = map[string]struct{}{}
		}
		s.unfilled[key] = struct{}{}
	case len(s.unfilled) == 0:
		return // the usual case, once per write: nothing is missing
	default:
		delete(s.unfilled, key)
	}
	s.unfilledN.Store(int64(len(s.unfilled)))
}
