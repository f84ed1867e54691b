package fakeapi

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// fakeapi plays kube-controller-manager's garbage collector, so that an
// owner-based controller can be tested end to end in one process: when an
// object goes, the objects whose metadata.ownerReferences name its UID
// (its dependents) go after it, unless another owner of theirs is still
// there, in which case they only lose the reference. A DELETE chooses how
// (DeleteOptions.propagationPolicy, kubectl's --cascade):
//
//   - Background (the default): the owner goes at once, its dependents
//     after it.
//   - Foreground: the owner gets a deletionTimestamp and the
//     foregroundDeletion finalizer; its dependents are deleted; the
//     finalizer is removed (and the owner goes) when no dependent whose
//     reference has blockOwnerDeletion is left.
//   - Orphan: the owner gets a deletionTimestamp and the orphan finalizer;
//     its dependents lose their reference to it; then the finalizer is
//     removed.
//
// An object written with a reference to an owner this server has deleted
// (a controller that acted on a stale cache) is collected too, as the real
// collector does when it finds the owner absent. Only UIDs this server
// issued are judged: a reference to an owner it never stored (a test's
// made-up UID) is left alone, and so is a cluster-scoped dependent's
// reference to a namespaced owner, which cannot resolve (unresolvable).
//
// The collector runs synchronously, inside the write that deleted or
// marked the owner (collect, called by Server.writeLocked after any write,
// the removal of a CRD's objects included), so it starts no goroutine; clients still see the real order of events. It follows
// owners by an index kept on every commit, so a write costs nothing more
// when nothing owns anything.

const (
	finalizerOrphan     = metav1.FinalizerOrphanDependents
	finalizerForeground = metav1.FinalizerDeleteDependents
	// maxCollectSteps bounds one collection; a store never holds that
	// many owners, so it only stops a bug from spinning under the lock.
	maxCollectSteps = 1 << 22
	// uidPrefix begins every UID the store issues; a counter in hex
	// follows, so a UID tells whether this server issued it (store.create).
	uidPrefix = "00000000-0000-4000-8000-"
)

// objectRef names a stored object.
type objectRef struct {
	res *resourceInfo
	key string
}

// collector is the garbage collector's state. It belongs to the store and,
// like it, is a deterministic state machine guarded by the Server's mutex.
type collector struct {
	// dependents maps an owner's UID to the objects whose ownerReferences
	// name it.
	dependents map[types.UID]map[objectRef]struct{}
	// waiting holds the owners being deleted in the foreground, by UID.
	waiting map[types.UID]objectRef
	// pending are the owners to look at: gone (uid set) or marked.
	pending []gcItem
}

// gcItem is an object the collector has to look at: an owner that is gone
// (its dependents are orphaned or collected), one marked with a finalizer
// of the collector's, or a dependent whose owners may be gone (dependent).
type gcItem struct {
	uid       types.UID
	ref       objectRef // zero when the owner is gone
	dependent bool
}

// observe updates the index for a commit of obj over prev and queues the
// work the commit makes for the collector.
func (c *collector) observe(ri *resourceInfo, key string, typ watch.EventType, obj, prev runtime.Object) {
	if prev != nil {
		pm, _ := meta.Accessor(prev)
		for _, o := range pm.GetOwnerReferences() {
			c.unlink(o.UID, objectRef{ri, key})
		}
	}
	m, _ := meta.Accessor(obj)
	ref := objectRef{ri, key}
	if typ == watch.Deleted {
		delete(c.waiting, m.GetUID())
		if len(c.dependents[m.GetUID()]) > 0 {
			c.pending = append(c.pending, gcItem{uid: m.GetUID()})
		}
		// A dependent gone may free an owner deleted in the foreground.
		for _, o := range m.GetOwnerReferences() {
			if owner, ok := c.waiting[o.UID]; ok {
				c.pending = append(c.pending, gcItem{uid: o.UID, ref: owner})
			}
		}
		return
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 && (prev == nil || ownersChanged(prev, refs)) {
		c.pending = append(c.pending, gcItem{uid: m.GetUID(), ref: ref, dependent: true})
	}
	for _, o := range m.GetOwnerReferences() {
		if c.dependents == nil {
			c.dependents = map[types.UID]map[objectRef]struct{}{}
		}
		if c.dependents[o.UID] == nil {
			c.dependents[o.UID] = map[objectRef]struct{}{}
		}
		c.dependents[o.UID][ref] = struct{}{}
	}
	if m.GetDeletionTimestamp() == nil {
		return
	}
	fin := m.GetFinalizers()
	if slices.Contains(fin, finalizerForeground) {
		if c.waiting == nil {
			c.waiting = map[types.UID]objectRef{}
		}
		c.waiting[m.GetUID()] = ref
	}
	if slices.Contains(fin, finalizerForeground) || slices.Contains(fin, finalizerOrphan) {
		if prev == nil || !sameFinalizers(prev, fin) {
			c.pending = append(c.pending, gcItem{uid: m.GetUID(), ref: ref})
		}
	}
}

func ownersChanged(prev runtime.Object, refs []metav1.OwnerReference) bool {
	pm, _ := meta.Accessor(prev)
	return !slices.EqualFunc(pm.GetOwnerReferences(), refs, func(a, b metav1.OwnerReference) bool { return a.UID == b.UID })
}

func sameFinalizers(prev runtime.Object, fin []string) bool {
	pm, _ := meta.Accessor(prev)
	return pm.GetDeletionTimestamp() != nil && slices.Equal(pm.GetFinalizers(), fin)
}

func (c *collector) unlink(owner types.UID, dep objectRef) {
	if deps := c.dependents[owner]; deps != nil {
		delete(deps, dep)
		if len(deps) == 0 {
			delete(c.dependents, owner)
		}
	}
}

// collect does the collector's pending work, and the work that work makes,
// within the current write.
func (s *store) collect(reg *registry) {
	for step := 0; len(s.gc.pending) > 0 && step < maxCollectSteps; step++ {
		item := s.gc.pending[0]
		s.gc.pending = s.gc.pending[1:]
		if item.ref.res == nil {
			s.collectDependents(reg, item.uid)
			continue
		}
		obj, ok := s.stored(item.ref)
		if !ok {
			continue
		}
		m, _ := meta.Accessor(obj)
		if m.GetUID() != item.uid {
			continue // gone and made again: the new one was queued itself
		}
		if item.dependent {
			if m.GetDeletionTimestamp() == nil {
				s.collectIfOrphaned(reg, item.ref, m)
			}
			continue
		}
		if m.GetDeletionTimestamp() == nil {
			continue
		}
		switch fin := m.GetFinalizers(); {
		case slices.Contains(fin, finalizerOrphan):
			s.orphanDependents(m.GetUID())
			s.removeFinalizer(item.ref, finalizerOrphan)
		case slices.Contains(fin, finalizerForeground):
			s.deleteForeground(reg, item.ref, m.GetUID())
		}
	}
	if len(s.gc.pending) > 0 {
		s.gc.pending = nil
	}
}

// collectDependents deals with the dependents of a gone owner: a dependent
// with another owner still there only loses the reference; the others are
// deleted in the background.
func (s *store) collectDependents(reg *registry, uid types.UID) {
	for _, dep := range s.dependentsOf(uid) {
		obj := s.bucket(dep.res).objects[dep.key]
		m, _ := meta.Accessor(obj)
		if o := ownerRefTo(m, uid); o != nil && unresolvable(reg, m, *o) {
			continue
		}
		if s.hasLiveOwner(reg, m, uid) {
			s.dropOwner(dep, uid)
			continue
		}
		if m.GetDeletionTimestamp() == nil {
			s.deleteDependent(reg, dep, metav1.DeletePropagationBackground)
		}
	}
}

// collectIfOrphaned deals with an object written with owner references:
// references to owners this server issued and no longer stores are
// dangling; an object with only dangling ones is deleted, one with others
// too loses the dangling ones.
func (s *store) collectIfOrphaned(reg *registry, ref objectRef, m metav1.Object) {
	refs := m.GetOwnerReferences()
	dangling := 0
	for _, o := range refs {
		if s.ownerGone(reg, m, o) {
			dangling++
		}
	}
	switch {
	case dangling == 0:
	case dangling == len(refs):
		s.deleteDependent(reg, ref, metav1.DeletePropagationBackground)
	default:
		for _, o := range refs {
			if s.ownerGone(reg, m, o) {
				s.dropOwner(ref, o.UID)
			}
		}
	}
}

// ownerGone reports whether o names an owner this server issued and has
// deleted: its UID is one of the store's, and its kind is served, but no
// object of that kind and name has that UID.
func (s *store) ownerGone(reg *registry, m metav1.Object, o metav1.OwnerReference) bool {
	n, ok := strings.CutPrefix(string(o.UID), uidPrefix)
	if !ok || len(n) != 12 {
		return false
	}
	if seq, err := strconv.ParseUint(n, 16, 64); err != nil || seq > s.uids {
		return false
	}
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return false
	}
	ri, ok := reg.byKind(gv.WithKind(o.Kind))
	if !ok || unresolvable(reg, m, o) {
		return false
	}
	ns := m.GetNamespace()
	if ri.ClusterScoped {
		ns = ""
	}
	owner, err := s.get(ri, ns, o.Name)
	if err != nil {
		return true
	}
	om, _ := meta.Accessor(owner)
	return om.GetUID() != o.UID
}

// deleteForeground deletes the dependents of an owner being deleted in the
// foreground, and removes its finalizer once none of them blocks it.
func (s *store) deleteForeground(reg *registry, owner objectRef, uid types.UID) {
	blocked := false
	for _, dep := range s.dependentsOf(uid) {
		obj := s.bucket(dep.res).objects[dep.key]
		m, _ := meta.Accessor(obj)
		ref := ownerRefTo(m, uid)
		if ref != nil && unresolvable(reg, m, *ref) {
			continue
		}
		block := ref != nil && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
		if m.GetDeletionTimestamp() == nil {
			policy := metav1.DeletePropagationBackground
			if block && len(s.gc.dependents[m.GetUID()]) > 0 {
				policy = metav1.DeletePropagationForeground
			}
			s.deleteDependent(reg, dep, policy)
		}
		if _, still := s.stored(dep); still && block {
			blocked = true
		}
	}
	if !blocked {
		s.removeFinalizer(owner, finalizerForeground)
	}
}

// stored returns the object ref names, if it is stored; unlike bucket, it
// makes no bucket for a resource no longer served.
func (s *store) stored(ref objectRef) (runtime.Object, bool) {
	b, ok := s.buckets[ref.res]
	if !ok {
		return nil, false
	}
	obj, ok := b.objects[ref.key]
	return obj, ok
}

// orphanDependents removes every reference to the owner uid.
func (s *store) orphanDependents(uid types.UID) {
	for _, dep := range s.dependentsOf(uid) {
		s.dropOwner(dep, uid)
	}
}

// dependentsOf lists the stored dependents of uid in a stable order.
func (s *store) dependentsOf(uid types.UID) []objectRef {
	var deps []objectRef
	for dep := range s.gc.dependents[uid] {
		if _, ok := s.stored(dep); ok {
			deps = append(deps, dep)
		}
	}
	slices.SortFunc(deps, func(a, b objectRef) int {
		if c := compareStrings(a.res.gvr.String(), b.res.gvr.String()); c != 0 {
			return c
		}
		return compareStrings(a.key, b.key)
	})
	return deps
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hasLiveOwner reports whether an owner of m other than gone is stored. An
// owner of a kind the server does not serve counts as live: the collector
// cannot tell, and deleting is the mistake that cannot be undone.
func (s *store) hasLiveOwner(reg *registry, m metav1.Object, gone types.UID) bool {
	for _, o := range m.GetOwnerReferences() {
		if o.UID == gone {
			continue
		}
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil {
			return true
		}
		ri, ok := reg.byKind(gv.WithKind(o.Kind))
		if !ok || unresolvable(reg, m, o) {
			return true
		}
		ns := m.GetNamespace()
		if ri.ClusterScoped {
			ns = ""
		}
		if owner, err := s.get(ri, ns, o.Name); err == nil {
			if om, _ := meta.Accessor(owner); om.GetUID() == o.UID {
				return true
			}
		}
	}
	return false
}

// unresolvable reports whether o can never name an owner of m: m is
// cluster-scoped and o names a namespaced kind, which has no namespace to
// be looked up in. Kubernetes' collector reports such a reference (an
// OwnerRefInvalidNamespace event) and never deletes the dependent through
// it, whatever becomes of an object of that name and UID; nor does this
// one. (A namespaced dependent may name a cluster-scoped owner.)
func unresolvable(reg *registry, m metav1.Object, o metav1.OwnerReference) bool {
	if m.GetNamespace() != "" {
		return false
	}
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return false
	}
	ri, ok := reg.byKind(gv.WithKind(o.Kind))
	return ok && !ri.ClusterScoped
}

func ownerRefTo(m metav1.Object, uid types.UID) *metav1.OwnerReference {
	for _, o := range m.GetOwnerReferences() {
		if o.UID == uid {
			return &o
		}
	}
	return nil
}

// dropOwner removes the references to uid from a dependent.
func (s *store) dropOwner(dep objectRef, uid types.UID) {
	old := s.bucket(dep.res).objects[dep.key]
	obj := old.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	m.SetOwnerReferences(slices.DeleteFunc(m.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == uid }))
	s.commit(dep.res, dep.key, watch.Modified, obj, old)
}

// removeFinalizer removes one of the collector's finalizers from an object
// being deleted; the object goes when it was the last.
func (s *store) removeFinalizer(ref objectRef, finalizer string) {
	old := s.bucket(ref.res).objects[ref.key]
	obj := old.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	m.SetFinalizers(slices.DeleteFunc(m.GetFinalizers(), func(f string) bool { return f == finalizer }))
	if len(m.GetFinalizers()) == 0 {
		s.commit(ref.res, ref.key, watch.Deleted, obj, old)
		return
	}
	s.commit(ref.res, ref.key, watch.Modified, obj, old)
}

// deleteDependent deletes a dependent as a client's DELETE would.
func (s *store) deleteDependent(reg *registry, dep objectRef, policy metav1.DeletionPropagation) {
	m, _ := meta.Accessor(s.bucket(dep.res).objects[dep.key])
	// A failure (the object is gone already) leaves nothing to do.
	_, _ = s.deleteWithPolicy(reg, dep.res, m.GetNamespace(), m.GetName(), preconditions{uid: m.GetUID()}, nil, policy)
}

// deleteWithPolicy is a client's DELETE of one object with a propagation
// policy: Foreground and Orphan mark the object with the collector's
// finalizer; Background (or none) deletes it as its kind is deleted, and
// the collector follows.
func (s *store) deleteWithPolicy(reg *registry, ri *resourceInfo, namespace, name string, pre preconditions, grace *int64, policy metav1.DeletionPropagation) (runtime.Object, error) {
	var finalizer string
	switch policy {
	case metav1.DeletePropagationForeground:
		finalizer = finalizerForeground
	case metav1.DeletePropagationOrphan:
		finalizer = finalizerOrphan
	}
	if finalizer != "" && ri.Kind != namespaceKind {
		return s.markForCollector(ri, namespace, name, pre, finalizer)
	}
	switch ri.Kind {
	case podKind:
		return s.deletePod(ri, namespace, name, pre, grace)
	case namespaceKind:
		return s.deleteNamespace(reg, ri, name, pre)
	}
	return s.deleteHonouringFinalizers(ri, namespace, name, pre)
}

// markForCollector gives an object the collector's finalizer and, if it
// has none yet, a deletionTimestamp; the collector takes it from there.
func (s *store) markForCollector(ri *resourceInfo, namespace, name string, pre preconditions, finalizer string) (runtime.Object, error) {
	old, err := s.get(ri, namespace, name)
	if err != nil {
		return nil, err
	}
	oldMeta, _ := meta.Accessor(old)
	if err := pre.check(ri, oldMeta); err != nil {
		return nil, err
	}
	if slices.Contains(oldMeta.GetFinalizers(), finalizer) && oldMeta.GetDeletionTimestamp() != nil {
		return old, nil
	}
	obj := old.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	if !slices.Contains(m.GetFinalizers(), finalizer) {
		m.SetFinalizers(append(m.GetFinalizers(), finalizer))
	}
	if m.GetDeletionTimestamp() == nil {
		now := metav1.NewTime(s.now())
		zero := int64(0)
		m.SetDeletionTimestamp(&now)
		m.SetDeletionGracePeriodSeconds(&zero)
		if ri.generation {
			m.SetGeneration(oldMeta.GetGeneration() + 1)
		}
	}
	return s.commit(ri, objectKey(ri, namespace, name), watch.Modified, obj, old), nil
}
