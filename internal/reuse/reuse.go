package reuse

import (
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer/internal/objkey"
)

// Cache is one informer's cache as a relist sees it: the decoders' side
// (Begin, Unchanged) is reflector/wire's RelistCache, the queue's side is
// Take. It is safe for concurrent use.
type Cache struct {
	get  func(key string) (runtime.Object, bool)
	size func() int // nil: unknown

	pending atomic.Int64 // len(given), read without the lock on every admitted object
	mu      sync.Mutex   // guards given
	given   map[types.UID]runtime.Object
}

// New returns a Cache that looks objects up with get, by namespace/name
// key; size, when not nil, counts the objects the cache holds.
func New(get func(key string) (runtime.Object, bool), size func() int) *Cache {
	return &Cache{get: get, size: size}
}

// Begin starts a relist: objects handed out by an earlier one and never
// taken back (a list that failed half way) are forgotten. It reports
// whether the cache may hold objects: false when size says it is empty,
// as at an informer's first sync, when Unchanged would find nothing.
func (c *Cache) Begin() bool {
	c.mu.Lock()
	c.given = nil
	c.pending.Store(0)
	c.mu.Unlock()
	return c.size == nil || c.size() > 0
}

// Unchanged returns the cached object with decoded's key, UID and
// resourceVersion, or nil when there is none, and remembers it for Take.
func (c *Cache) Unchanged(decoded runtime.Object) runtime.Object {
	m, err := meta.Accessor(decoded)
	if err != nil || m.GetName() == "" || m.GetResourceVersion() == "" || m.GetUID() == "" {
		return nil
	}
	cached, ok := c.get(objkey.Join(m.GetNamespace(), m.GetName()))
	if !ok {
		return nil
	}
	cm, err := meta.Accessor(cached)
	if err != nil || cm.GetUID() != m.GetUID() || cm.GetResourceVersion() != m.GetResourceVersion() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.given == nil {
		c.given = make(map[types.UID]runtime.Object)
	}
	c.given[m.GetUID()] = cached
	c.pending.Store(int64(len(c.given)))
	return cached
}

// Take returns the cached object Unchanged handed out for obj (obj is that
// object or a copy of it) and forgets it; false when obj is not one. It
// costs one atomic load when no relist is in progress.
func (c *Cache) Take(obj runtime.Object) (runtime.Object, bool) {
	if c.pending.Load() == 0 {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cached, ok := c.given[m.GetUID()]
	if !ok {
		return nil, false
	}
	// The same key as well as the same UID and resourceVersion: a hostile
	// server that sends one UID under two names must not get one object's
	// cached state filed under the other's key.
	cm, err := meta.Accessor(cached)
	if err != nil || cm.GetResourceVersion() != m.GetResourceVersion() ||
		cm.GetName() != m.GetName() || cm.GetNamespace() != m.GetNamespace() {
		return nil, false
	}
	delete(c.given, m.GetUID())
	c.pending.Store(int64(len(c.given)))
	return cached, true
}
