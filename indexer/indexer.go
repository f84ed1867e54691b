package indexer

import (
	"fmt"
	"hash/maphash"
	"iter"
	"maps"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/objkey"
)

// Indexer is a store of Kubernetes objects by key, with named secondary
// indexes. Keys are chosen by the caller ("namespace/name", or "name" for a
// cluster-scoped object, is the convention); the Indexer never computes them.
//
// It is safe for concurrent use by any number of readers and writers. Writes
// are serialised with each other, but never wait for a reader to finish, and
// readers never wait for a writer's index functions: see the package
// documentation for how.
//
// OBJECTS ARE SHARED, NOT COPIED. Every read returns the very objects that
// were written, which other readers see too. Never modify an object you got
// from an Indexer (or passed to one): copy it first with DeepCopyObject.
//
// Use New to make one; the zero value is not usable.
type Indexer struct {
	initErr error // set by New when its Indexers were unusable; every write returns it

	// writeMu serialises writers. It guards nextGen and plan, and gives its
	// holder the sole right to edit the open state. Readers never take it
	// (but for the one that puts the label index in use), so
	// a writer may run index functions (caller code) and even rebuild every
	// index (Replace) while holding it.
	writeMu sync.Mutex
	nextGen uint64
	plan    plan
	eds     editors
	// retiring: which copied nodes the writer may reuse (node_retiring.go).
	retiring retiring

	// mu guards the hand-over of the newest state between its writer, which
	// edits it in place while it is open and nobody reads it, and readers,
	// which freeze it (Freeze) or count themselves among its readers
	// (borrow) before they walk it, and look up one key (point) under it.
	// Nobody holds mu for more than O(log n): a writer holds it while it
	// applies one already-planned write, a reader while it sets a flag,
	// moves a count or looks up its key. It also guards every state's
	// readers count.
	mu     sync.Mutex
	latest atomic.Pointer[state] // the newest state; stored under mu, loaded by anyone
}

// New returns an empty Indexer with the built-in NamespaceIndex and
// LabelIndex and the caller's indexers (nil for none).
//
// If indexers is unusable (it uses a built-in name or has a nil function),
// the Indexer is still returned so that New needs no error result, but every
// write returns the error (wrapping ErrIndexExists or ErrNilIndexFunc) and the
// Indexer stays empty.
func New(indexers Indexers) *Indexer {
	x := &Indexer{nextGen: 1}
	defs, err := builtinIndexes().with(indexers)
	if err != nil {
		x.initErr = fmt.Errorf("indexer.New: %w", err)
		defs = builtinIndexes()
	}
	x.latest.Store(newState(x.nextGen, maphash.MakeSeed(), defs))
	return x
}

// CheckIndexers returns the error New would meet with indexers: nil, or
// one wrapping ErrIndexExists (a name the built-in NamespaceIndex or
// LabelIndex already has: client-go's habit of defining "namespace" itself
// is the usual cause) or ErrNilIndexFunc. Code that can still refuse a
// definition (the informer's factory) asks before it builds anything.
func CheckIndexers(indexers Indexers) error {
	_, err := builtinIndexes().with(indexers)
	return err
}

// Add stores obj under key, replacing any object already there (Add and
// Update are the same operation; both names exist because a watch reports
// ADDED and MODIFIED). It files the key in every index, and records obj's
// resourceVersion as the Indexer's when it has one.
//
// If an index function fails, Add returns an *IndexFuncError and changes
// nothing. A nil object or an empty key is refused the same way.
func (x *Indexer) Add(key string, obj runtime.Object) error {
	_, _, err := x.put(key, obj)
	return err
}

// Update is Add: it stores obj under key and moves the key between index
// values to match obj.
func (x *Indexer) Update(key string, obj runtime.Object) error {
	_, _, err := x.put(key, obj)
	return err
}

// Swap is Add that also returns the object key held before, if any. An
// informer needs that object to tell an add from an update and to hand
// handlers the old version; Swap finds it with the same lookup that stores
// the new one, where Get followed by Update would look the key up twice.
// On error nothing changes and old is nil.
func (x *Indexer) Swap(key string, obj runtime.Object) (old runtime.Object, existed bool, err error) {
	return x.put(key, obj)
}

func (x *Indexer) put(key string, obj runtime.Object) (old runtime.Object, existed bool, err error) {
	if err := checkItem(key, obj); err != nil {
		return nil, false, err
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	return x.putLocked(key, obj)
}

// putLocked is put with writeMu held and the item checked.
func (x *Indexer) putLocked(key string, obj runtime.Object) (old runtime.Object, existed bool, err error) {
	if x.initErr != nil {
		return nil, false, x.initErr
	}
	// Only writers change states, and we hold writeMu: reading the newest
	// state without mu is safe even while it is open.
	s := x.latest.Load()
	kh := s.hash(key)
	l, owned := s.objects.find(s.gen, kh, key)
	var prev *entry
	if l != nil {
		prev = &l.val
		old, existed = prev.obj, true
	}
	e, err := x.plan.put(s, key, prev, obj)
	if err != nil {
		return nil, false, err
	}

	edit := x.beginEdit()
	ed := x.eds.at(edit)
	if edit == s && owned && l != nil {
		// No reader has seen s since we looked, and every node down to the
		// leaf is ours: replace the value where it is, like a map would.
		l.val = e
	} else {
		edit.objects = edit.objects.set(&ed.objects, kh, key, e)
	}
	edit.apply(ed, x.plan.moves, kh, key)
	if x.plan.rv != "" {
		edit.rv = x.plan.rv
	}
	x.endEdit(edit)
	return old, existed, nil
}

// Delete removes the object stored under key from the store and every
// index. Deleting a key that is not there does nothing. Delete does not change
// the resourceVersion: it has no object to read one from (use
// SetResourceVersion).
func (x *Indexer) Delete(key string) error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	return x.deleteLocked(key)
}

// deleteLocked is Delete with writeMu held.
func (x *Indexer) deleteLocked(key string) error {
	if x.initErr != nil {
		return x.initErr
	}
	s := x.latest.Load()
	kh := s.hash(key)
	old, ok := s.objects.get(kh, key)
	if !ok {
		return nil
	}
	x.plan.remove(s, &old)

	s = x.beginEdit()
	ed := x.eds.at(s)
	s.objects, _ = s.objects.del(&ed.objects, kh, key)
	s.apply(ed, x.plan.moves, kh, key)
	x.endEdit(s)
	return nil
}

// Replace swaps the whole content for items (key to object) and sets the
// resourceVersion to resourceVersion, in one step: a reader sees either the
// old content or the new one, never a mix. The Indexer does not keep items.
//
// The new content, with every index, is built before anything changes, while
// readers go on reading the old one. If any item is refused (nil, empty key,
// failing index function) Replace returns the error and changes nothing.
func (x *Indexer) Replace(items map[string]runtime.Object, resourceVersion string) error {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.initErr != nil {
		return x.initErr
	}
	cur := x.latest.Load()
	s, err := x.build(cur.defs, cur.labels, maps.All(items), resourceVersion)
	if err != nil {
		return err
	}
	x.publish(s)
	return nil
}

// AddIndexers adds indexes, which may happen at any time: the objects
// already stored are filed in the new indexes before AddIndexers returns.
//
// A name that is already taken (including a built-in) is refused with
// ErrIndexExists, a nil function with ErrNilIndexFunc, and an index function
// that fails on a stored object with an *IndexFuncError. In every such case
// nothing changes.
func (x *Indexer) AddIndexers(indexers Indexers) error {
	if len(indexers) == 0 {
		return nil
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.initErr != nil {
		return x.initErr
	}
	cur := x.latest.Load()
	defs, err := cur.defs.with(indexers)
	if err != nil {
		return fmt.Errorf("indexer.AddIndexers: %w", err)
	}
	// Rebuilding everything is O(n), like filing every object in the new
	// indexes would be, and it reuses the one code path Replace already
	// proves. Adding indexes is rare; simplicity wins.
	s, err := x.build(defs, cur.labels, cur.all(), cur.rv)
	if err != nil {
		return err
	}
	x.publish(s)
	return nil
}

// SetResourceVersion records the resourceVersion the content reflects, for
// progress that carries no object: a bookmark, a delete, the end of a batch.
func (x *Indexer) SetResourceVersion(rv string) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	s := x.beginEdit()
	s.rv = rv
	x.endEdit(s)
}

// UseLabelIndex makes sure LabelIndex is maintained from now on. Until
// something needs it, an Indexer does not maintain its label index: writes
// then skip comparing labels, and no memory goes to label buckets. The
// first call builds the index from the stored objects, O(n), holding up
// writers (not readers) meanwhile; later calls cost one atomic load. Listers
// call it before their first equality-selector List, and ByIndex, IndexKeys
// and ListIndexFuncValues call it when asked about LabelIndex.
func (x *Indexer) UseLabelIndex() error {
	if x.latest.Load().labels {
		return nil
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if x.initErr != nil {
		return x.initErr
	}
	cur := x.latest.Load()
	if cur.labels {
		return nil // another reader got here first
	}
	// The new state shares every other index with cur; the label index is
	// built, and every entry learns the label values it is filed under, in
	// place, under the new generation.
	x.nextGen++
	s := cur.thaw(x.nextGen)
	s.labels = true
	i := s.defs.byName[LabelIndex]
	ed := x.eds.at(s)
	cur.objects.each(func(l *leaf[entry]) bool {
		vals := objectLabelValues(l.val.obj)
		if len(vals) == 0 {
			return true // filed nowhere, which its entry already says
		}
		e := l.val.withFiled(i, len(s.defs.list), vals)
		s.objects = s.objects.set(&ed.objects, l.hash, l.key, e)
		for _, v := range vals {
			s.indexes[i] = s.file(ed, s.indexes[i], v, l.hash, l.key)
		}
		return true
	})
	x.publish(s)
	return nil
}

// build makes a new open state holding items, filed in the indexes of defs
// (in LabelIndex only if labels). Nobody else can see the new state yet, so
// it needs no lock beyond writeMu.
func (x *Indexer) build(defs *indexSet, labels bool, items iter.Seq2[string, runtime.Object], rv string) (*state, error) {
	x.nextGen++
	s := newState(x.nextGen, x.latest.Load().seed, defs)
	s.labels = labels
	ed := x.eds.at(s)
	for key, obj := range items {
		if err := checkItem(key, obj); err != nil {
			return nil, err
		}
		e, err := x.plan.put(s, key, nil, obj)
		if err != nil {
			return nil, err
		}
		kh := s.hash(key)
		s.objects = s.objects.set(&ed.objects, kh, key, e)
		s.apply(ed, x.plan.moves, kh, key)
	}
	s.rv = rv
	return s, nil
}

// beginEdit locks mu and returns the open state the writer may edit in
// place: the newest state if no reader holds it (none froze it, none is
// reading it now), otherwise a thawed copy under a new generation. The caller must hold writeMu, and must call
// endEdit.
func (x *Indexer) beginEdit() *state {
	x.mu.Lock()
	x.settleRetired()
	s := x.latest.Load()
	if s.frozen.Load() || s.readers > 0 {
		x.nextGen++
		old := s
		s = s.thaw(x.nextGen)
		x.startRetiring(old, s)
	}
	return s
}

// endEdit publishes the edited state and unlocks mu.
func (x *Indexer) endEdit(s *state) {
	if x.latest.Load() != s { // an in-place edit needs no new pointer
		x.latest.Store(s)
	}
	x.mu.Unlock()
}

// publish makes a freshly built state the newest one.
func (x *Indexer) publish(s *state) {
	x.mu.Lock()
	x.endEdit(s)
}

// freeze returns the newest state, frozen. If an earlier Freeze froze it
// already (no write since), this is one atomic load and no lock at all.
func (x *Indexer) freeze() *state {
	if s := x.latest.Load(); s.frozen.Load() {
		return s
	}
	x.mu.Lock()
	s := x.latest.Load()
	s.frozen.Store(true)
	x.mu.Unlock()
	return s
}

// borrow returns the newest state for a read that is over before its
// caller returns (List, ByIndex, Len, ...), and whether the read was
// counted; giveBack ends it. Such a read does not freeze an open state: it
// counts itself among the state's readers, so that a write arriving
// meanwhile copies what it changes (beginEdit), and once the read is given
// back the writer goes on editing in place. Freezing would make every write
// after the read copy the paths it changes, until the writer's new
// generation owned them all again: with writes spread over the cache, as a
// watch's are, most of the cache copied once per read.
func (x *Indexer) borrow() (*state, bool) {
	if s := x.latest.Load(); s.frozen.Load() {
		return s, false // frozen states never change: nothing to count
	}
	x.mu.Lock()
	s := x.latest.Load()
	counted := !s.frozen.Load()
	if counted {
		s.readers++
	}
	x.mu.Unlock()
	return s, counted
}

// giveBack ends a read begun with borrow.
func (x *Indexer) giveBack(s *state, counted bool) {
	if counted {
		x.mu.Lock()
		s.readers--
		if s.readers == 0 {
			x.releaseRetired(s)
		}
		x.mu.Unlock()
	}
}

// all iterates over the objects of s.
func (s *state) all() iter.Seq2[string, runtime.Object] {
	return func(yield func(string, runtime.Object) bool) {
		s.objects.each(func(l *leaf[entry]) bool { return yield(l.key, l.val.obj) })
	}
}

// checkItem refuses what no index could file: an empty key, or a nil object
// (including a typed nil pointer, whose metadata methods would panic).
func checkItem(key string, obj runtime.Object) error {
	if key == "" {
		return ErrEmptyKey
	}
	if objkey.IsNil(obj) {
		return fmt.Errorf("%w: key %q (%T)", ErrNilObject, key, obj)
	}
	return nil
}
