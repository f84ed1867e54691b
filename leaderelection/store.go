package leaderelection

import (
	"context"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// LeaseStore reads and writes one lease record. Implementations must
// honour ctx (the Elector bounds every call by the end of its authority)
// and must give writes optimistic concurrency: an Update whose
// ResourceVersion is not the stored one fails, so that of two candidates
// racing for an expired lease exactly one wins.
//
// Errors are the API server's: *apierrors.StatusError, so that
// apierrors.IsConflict and IsNotFound tell them apart.
type LeaseStore interface {
	// Get returns the record, or nil and no error when the lease does not
	// exist.
	Get(ctx context.Context) (*Record, error)
	// Create creates the lease; it fails with AlreadyExists if it exists.
	Create(ctx context.Context, rec Record) (*Record, error)
	// Update replaces the record if rec.ResourceVersion is current; it
	// fails with Conflict otherwise.
	Update(ctx context.Context, rec Record) (*Record, error)
	// Describe names the lease in logs ("kube-system/my-controller").
	Describe() string
}

// MemoryStore is a LeaseStore in memory, with the server's concurrency
// rule, for tests and for candidates in one process. Fail, when set, is
// called before each request; an error it returns is the answer (a test's
// outage). The zero value is an empty store, safe for concurrent use.
type MemoryStore struct {
	Name string // for Describe and errors; "" means "lease"
	// Fail injects faults: its error, when not nil, answers the request.
	// Set it before the store is shared; it may be called concurrently.
	Fail func(op string) error

	mu  sync.Mutex // guards rec and rv
	rec *Record
	rv  int
}

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func (s *MemoryStore) name() string {
	if s.Name == "" {
		return "lease"
	}
	return s.Name
}

// Describe names the store.
func (s *MemoryStore) Describe() string { return s.name() }

// Delete removes the lease, as `kubectl delete lease` or the deletion of
// its namespace would: the case a candidate must not take for a free lease.
func (s *MemoryStore) Delete() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec = nil
}

func (s *MemoryStore) fail(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.Fail != nil {
		return s.Fail(op)
	}
	return nil
}

// Get returns a copy of the record, or nil.
func (s *MemoryStore) Get(ctx context.Context) (*Record, error) {
	if err := s.fail(ctx, "get"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return nil, nil
	}
	out := *s.rec
	return &out, nil
}

// Create stores rec if there is no record yet.
func (s *MemoryStore) Create(ctx context.Context, rec Record) (*Record, error) {
	if err := s.fail(ctx, "create"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		return nil, apierrors.NewAlreadyExists(leaseResource, s.name())
	}
	return s.store(rec), nil
}

// Update stores rec if its ResourceVersion is the stored one.
func (s *MemoryStore) Update(ctx context.Context, rec Record) (*Record, error) {
	if err := s.fail(ctx, "update"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return nil, apierrors.NewNotFound(leaseResource, s.name())
	}
	if rec.ResourceVersion != s.rec.ResourceVersion {
		return nil, apierrors.NewConflict(leaseResource, s.name(), nil)
	}
	return s.store(rec), nil
}

func (s *MemoryStore) store(rec Record) *Record {
	s.rv++
	rec.ResourceVersion = strconv.Itoa(s.rv)
	// As on the wire: Lease times are MicroTime, without a monotonic reading.
	rec.AcquireTime, rec.RenewTime = rec.AcquireTime.Round(0).Truncate(time.Microsecond), rec.RenewTime.Round(0).Truncate(time.Microsecond)
	s.rec = &rec
	out := rec
	return &out
}
