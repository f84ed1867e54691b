package sharding

import (
	"context"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/leaderelection"
)

// LeaseGroup is the set of leases of one sharded controller: one per
// shard and one per member. Lock gives the store of one lease; List reads
// them all in one request, which is how members learn who else is there.
type LeaseGroup interface {
	Lock(name string) leaderelection.LeaseStore
	// List returns every lease of the group by name.
	List(ctx context.Context) (map[string]leaderelection.Record, error)
}

// GroupLabel marks the Leases of a group, so that one List finds them.
const GroupLabel = "sharding.informer.dev/group"

// ClientGroup is a LeaseGroup of coordination.k8s.io/v1 Leases in one
// namespace, labelled GroupLabel=Group, through package client.
type ClientGroup struct {
	Leases    *client.Resource[*coordinationv1.Lease]
	Namespace string
	Group     string
}

// NewClientGroup returns the group of Leases labelled group in namespace.
func NewClientGroup(c *client.Client, namespace, group string) (*ClientGroup, error) {
	leases, err := client.For[*coordinationv1.Lease](c)
	if err != nil {
		return nil, err
	}
	return &ClientGroup{Leases: leases, Namespace: namespace, Group: group}, nil
}

// Lock returns the LeaseLock of one lease of the group, labelled.
func (g *ClientGroup) Lock(name string) leaderelection.LeaseStore {
	return &leaderelection.LeaseLock{Leases: g.Leases, Namespace: g.Namespace, Name: name,
		Labels: map[string]string{GroupLabel: g.Group}}
}

// List reads the group's Leases with one request.
func (g *ClientGroup) List(ctx context.Context) (map[string]leaderelection.Record, error) {
	sel := labels.SelectorFromSet(labels.Set{GroupLabel: g.Group}).String()
	items, _, err := g.Leases.List(ctx, g.Namespace, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	out := make(map[string]leaderelection.Record, len(items))
	for _, l := range items {
		out[l.Name] = leaderelection.RecordOf(l)
	}
	return out, nil
}

// MemoryGroup is a LeaseGroup of MemoryStores, for tests. The zero value
// is empty and ready; it is safe for concurrent use.
type MemoryGroup struct {
	mu     sync.Mutex // guards leases
	leases map[string]*leaderelection.MemoryStore
}

// Lock returns the store of one lease, made on first use.
func (g *MemoryGroup) Lock(name string) leaderelection.LeaseStore {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leases == nil {
		g.leases = map[string]*leaderelection.MemoryStore{}
	}
	s, ok := g.leases[name]
	if !ok {
		s = &leaderelection.MemoryStore{Name: name}
		g.leases[name] = s
	}
	return s
}

// List reads every lease that exists.
func (g *MemoryGroup) List(ctx context.Context) (map[string]leaderelection.Record, error) {
	g.mu.Lock()
	stores := make(map[string]*leaderelection.MemoryStore, len(g.leases))
	for name, s := range g.leases {
		stores[name] = s
	}
	g.mu.Unlock()
	out := map[string]leaderelection.Record{}
	for name, s := range stores {
		rec, err := s.Get(ctx)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			out[name] = *rec
		}
	}
	return out, nil
}
