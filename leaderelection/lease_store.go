package leaderelection

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/client"
)

// LeaseLock is the LeaseStore of one coordination.k8s.io/v1 Lease, read
// and written through package client: the client's rate limiter (share
// one with your informers through rest.Config.RateLimiter), its bounded
// reads and its typed errors. The lease's resourceVersion gives the
// optimistic concurrency the election needs. The Lease belongs to the
// election: an update writes the spec and Labels, and keeps no other
// labels or annotations.
// It is safe for concurrent use.
type LeaseLock struct {
	Leases    *client.Resource[*coordinationv1.Lease]
	Namespace string
	Name      string
	// Labels are written on the Lease with every write, so that a group
	// of leases can be listed by label (package sharding).
	Labels map[string]string
}

// NewLeaseLock returns the lock of the Lease namespace/name, written
// through c.
func NewLeaseLock(c *client.Client, namespace, name string) (*LeaseLock, error) {
	leases, err := client.For[*coordinationv1.Lease](c)
	if err != nil {
		return nil, err
	}
	return &LeaseLock{Leases: leases, Namespace: namespace, Name: name}, nil
}

// Describe returns namespace/name.
func (l *LeaseLock) Describe() string { return l.Namespace + "/" + l.Name }

// Get reads the Lease from the server (never from a cache: a stale read
// would restart a follower's expiry clock on an old record).
func (l *LeaseLock) Get(ctx context.Context) (*Record, error) {
	lease, err := l.Leases.Get(ctx, l.Namespace, l.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec := RecordOf(lease)
	return &rec, nil
}

// Create creates the Lease with rec.
func (l *LeaseLock) Create(ctx context.Context, rec Record) (*Record, error) {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name, Labels: l.Labels}}
	setSpec(lease, rec)
	out, err := l.Leases.Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	got := RecordOf(out)
	return &got, nil
}

// Update writes rec over the Lease if rec.ResourceVersion is current.
func (l *LeaseLock) Update(ctx context.Context, rec Record) (*Record, error) {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: l.Name,
		Labels: l.Labels, ResourceVersion: rec.ResourceVersion}}
	setSpec(lease, rec)
	out, err := l.Leases.Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	got := RecordOf(out)
	return &got, nil
}

// RecordOf reads a Lease's spec as a Record.
func RecordOf(lease *coordinationv1.Lease) Record {
	s := lease.Spec
	rec := Record{ResourceVersion: lease.ResourceVersion}
	if s.HolderIdentity != nil {
		rec.HolderIdentity = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		rec.LeaseDuration = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	if s.AcquireTime != nil {
		rec.AcquireTime = s.AcquireTime.Time
	}
	if s.RenewTime != nil {
		rec.RenewTime = s.RenewTime.Time
	}
	if s.LeaseTransitions != nil {
		rec.LeaseTransitions = *s.LeaseTransitions
	}
	return rec
}

func setSpec(lease *coordinationv1.Lease, rec Record) {
	seconds := int32((rec.LeaseDuration + time.Second - 1) / time.Second)
	acquire, renew := metav1.NewMicroTime(rec.AcquireTime), metav1.NewMicroTime(rec.RenewTime)
	lease.Spec = coordinationv1.LeaseSpec{HolderIdentity: &rec.HolderIdentity, LeaseDurationSeconds: &seconds,
		AcquireTime: &acquire, RenewTime: &renew, LeaseTransitions: &rec.LeaseTransitions}
}

// OnLease returns an Elector for the Lease namespace/name, written through
// c: NewLeaseLock and New in one call, the set-up most controllers need
// (opts.Lock is set to that lock). The Lease is created on the first
// campaign if it does not exist.
func OnLease(c *client.Client, namespace, name string, opts Options) (*Elector, error) {
	lock, err := NewLeaseLock(c, namespace, name)
	if err != nil {
		return nil, err
	}
	opts.Lock = lock
	return New(opts)
}
