package leaderelection

import "time"

// Record is what a lease holds, in the units the machine reasons in. It
// maps one to one onto a coordination.k8s.io/v1 Lease's spec (lease_store.go).
type Record struct {
	// HolderIdentity is the current holder; "" means nobody (released).
	HolderIdentity string
	// LeaseDuration is the holder's promise: followers may take the lease
	// this long after they saw the record last change.
	LeaseDuration time.Duration
	// AcquireTime and RenewTime are the holder's wall clock when it took
	// and last renewed the lease. They are for people reading the lease
	// (kubectl get lease -o yaml): no candidate compares them with its own
	// clock, since clocks on two machines need not agree.
	AcquireTime, RenewTime time.Time
	// LeaseTransitions counts changes of holder.
	LeaseTransitions int32
	// ResourceVersion is the server's version of the record: a write
	// carries the version it was based on and fails with a conflict if
	// another candidate wrote in between. Opaque.
	ResourceVersion string
}

// sameAs tells whether two reads show the same record: what a follower's
// expiry clock restarts on. The resourceVersion is left out, so that an
// edit of the Lease's labels does not prolong a dead leader's term; every
// renew changes RenewTime.
func (r Record) sameAs(o Record) bool {
	return r.HolderIdentity == o.HolderIdentity && r.LeaseDuration == o.LeaseDuration &&
		r.AcquireTime.Equal(o.AcquireTime) && r.RenewTime.Equal(o.RenewTime) &&
		r.LeaseTransitions == o.LeaseTransitions
}
