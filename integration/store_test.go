package integration

import (
	"fmt"
	"maps"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// mapStore is the simplest reflector.Store there is: a map from key to
// resourceVersion. Scenarios compare it with the server's objects. It is safe
// for concurrent use: the reflector writes, the test reads.
type mapStore struct {
	mu       sync.Mutex        // guards items and replaces
	items    map[string]string // key -> resourceVersion
	replaces int
}

func newMapStore() *mapStore { return &mapStore{items: map[string]string{}} }

func keyAndRV(obj runtime.Object) (string, string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", "", err
	}
	key := m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return key, m.GetResourceVersion(), nil
}

func (s *mapStore) put(obj runtime.Object) error {
	key, rv, err := keyAndRV(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.items[key] = rv
	s.mu.Unlock()
	return nil
}

func (s *mapStore) Add(obj runtime.Object) error    { return s.put(obj) }
func (s *mapStore) Update(obj runtime.Object) error { return s.put(obj) }

func (s *mapStore) Delete(obj runtime.Object) error {
	key, _, err := keyAndRV(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.items, key)
	s.mu.Unlock()
	return nil
}

func (s *mapStore) Replace(list []runtime.Object, _ string) error {
	next := make(map[string]string, len(list))
	for _, obj := range list {
		key, rv, err := keyAndRV(obj)
		if err != nil {
			return fmt.Errorf("replace: %w", err)
		}
		next[key] = rv
	}
	s.mu.Lock()
	s.items = next
	s.replaces++
	s.mu.Unlock()
	return nil
}

func (s *mapStore) Resync() error         { return nil }
func (s *mapStore) Bookmark(string) error { return nil }

// newestRV is the highest resourceVersion among the stored objects: the
// reflector has read every event up to it.
func (s *mapStore) newestRV(t *testing.T) uint64 {
	t.Helper()
	var newest uint64
	for key, rv := range s.snapshot() {
		n, err := strconv.ParseUint(rv, 10, 64)
		require.NoError(t, err, "%s: resourceVersion %q", key, rv)
		newest = max(newest, n)
	}
	return newest
}

func (s *mapStore) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.items)
}
