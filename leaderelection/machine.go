package leaderelection

import "time"

// Machine is the lease rule of one candidate, as a state machine with no
// goroutines and no clock: the caller feeds it the time (its own
// monotonic clock) and the server's answers, and asks it what to write.
// Elector runs it against a LeaseStore; package sharding runs one per
// shard. Keeping the rule here, pure, lets tests walk it step by step in
// fake time, as etcd's raft is tested.
//
// A round is: Observe what a read returned, then Next to learn whether to
// write, then Wrote with the outcome. Tick steps a leader down when its
// authority has run out. The zero Machine is not usable: use NewMachine.
//
// A Machine is not safe for concurrent use.
type Machine struct {
	cfg Config

	observed Record
	// present is false until a read found the record (or we created it).
	present bool
	// observedAt is when, on our clock, the record last changed: a
	// follower's expiry counts from here, never from RenewTime, which is
	// another machine's clock.
	observedAt time.Time
	// leading is true from a successful acquire until Tick, Observe, Release
	// or StepDown ends the term.
	leading bool
	// authorityEnd is the send time of the last successful acquire or
	// renew plus RenewDeadline. Any other candidate saw that write no
	// earlier than it was sent, and waits LeaseDuration > RenewDeadline
	// from then, so until authorityEnd nobody else can hold the lease.
	authorityEnd time.Time
}

// Write is a write the machine wants sent: a create of the lease, or an
// update based on Record.ResourceVersion.
type Write struct {
	Create bool
	Record Record
}

// NewMachine returns a follower that has seen nothing yet. cfg gets its
// defaults; validate it first (Config.Validate).
func NewMachine(cfg Config) *Machine {
	return &Machine{cfg: cfg.WithDefaults()}
}

// Observe feeds the record a read returned, nil when the lease does not
// exist. A changed record restarts the follower's expiry clock. A leader
// that sees another holder has lost the lease and steps down. So does a
// leader whose lease is gone (deleted by hand, or with its namespace):
// anyone may create it now. The record last seen is kept, so that Next
// waits for its expiry before creating the lease again.
func (m *Machine) Observe(now time.Time, rec *Record) {
	if rec == nil {
		m.present = false
		m.leading = false
		return
	}
	m.see(now, *rec)
	if m.leading && rec.HolderIdentity != m.cfg.Identity {
		m.leading = false
	}
}

func (m *Machine) see(now time.Time, rec Record) {
	if !m.present || !rec.sameAs(m.observed) {
		m.observedAt = now
	}
	m.observed, m.present = rec, true
}

// Next returns the write this candidate should send at now, if any: a
// create when the lease does not exist, an acquire when the holder is
// nobody or its lease has expired on our clock, a renew when we hold it.
// It does not change the machine.
func (m *Machine) Next(now time.Time) (Write, bool) {
	me := m.cfg.Identity
	if !m.present {
		if m.heldByAnother(now) {
			// The lease vanished under another holder, who may still
			// believe it leads until its authority ends: wait for its
			// expiry on our clock, as if the record were still there.
			return Write{}, false
		}
		return Write{Create: true, Record: Record{HolderIdentity: me, LeaseDuration: m.cfg.LeaseDuration,
			AcquireTime: now, RenewTime: now}}, true
	}
	old := m.observed
	if m.heldByAnother(now) {
		return Write{}, false // held by another, not yet expired on our clock
	}
	rec := old
	rec.HolderIdentity, rec.LeaseDuration, rec.RenewTime = me, m.cfg.LeaseDuration, now
	if old.HolderIdentity != me {
		rec.AcquireTime = now
		rec.LeaseTransitions++
	}
	return Write{Record: rec}, true
}

// heldByAnother tells whether the record last seen names another holder
// whose lease has not yet expired on our clock.
func (m *Machine) heldByAnother(now time.Time) bool {
	h := m.observed.HolderIdentity
	return h != "" && h != m.cfg.Identity && now.Before(m.observedAt.Add(m.observed.LeaseDuration))
}

// Wrote feeds the outcome of a write from Next that was sent at sent: the
// record the server stored, or the error. Success starts or extends the
// term until sent + RenewDeadline. A failure changes nothing: the term
// runs out on its own, and the next read shows who won.
func (m *Machine) Wrote(sent, now time.Time, rec *Record, err error) {
	if err != nil || rec == nil {
		return
	}
	m.see(now, *rec)
	if rec.HolderIdentity != m.cfg.Identity {
		m.leading = false
		return
	}
	m.leading = true
	m.authorityEnd = sent.Add(m.cfg.RenewDeadline)
}

// Tick ends the term once now reaches the authority's end.
func (m *Machine) Tick(now time.Time) {
	if m.leading && !now.Before(m.authorityEnd) {
		m.leading = false
	}
}

// StepDown ends the term at once (the Elector's watchdog fired, or the
// candidate is shutting down).
func (m *Machine) StepDown() { m.leading = false }

// Leading tells whether this candidate holds the lease at now.
func (m *Machine) Leading(now time.Time) bool { return m.leading && now.Before(m.authorityEnd) }

// AuthorityEnd is when the current term ends unless renewed; the zero
// time when not leading.
func (m *Machine) AuthorityEnd() time.Time {
	if !m.leading {
		return time.Time{}
	}
	return m.authorityEnd
}

// Expiry is when, on our clock, another holder's lease expires unless we
// see it change first; the zero time when there is no other holder.
func (m *Machine) Expiry() time.Time {
	if !m.present || m.observed.HolderIdentity == "" || m.observed.HolderIdentity == m.cfg.Identity {
		return time.Time{}
	}
	return m.observedAt.Add(m.observed.LeaseDuration)
}

// Leader is the holder as last seen, "" for nobody.
func (m *Machine) Leader() string {
	if !m.present {
		return ""
	}
	return m.observed.HolderIdentity
}

// Observed returns the record as last seen, and whether one was seen.
func (m *Machine) Observed() (Record, bool) { return m.observed, m.present }

// Release ends the term and returns the write that hands the lease back:
// holder "" and a one-second duration, so that followers take it at their
// next retry instead of waiting LeaseDuration. ok is false when the last
// record seen is not ours (nothing to release). The write is based on
// the last resourceVersion seen, so it fails if someone else took the
// lease meanwhile.
func (m *Machine) Release(now time.Time) (Write, bool) {
	m.leading = false
	if !m.present || m.observed.HolderIdentity != m.cfg.Identity {
		return Write{}, false
	}
	rec := m.observed
	rec.HolderIdentity, rec.LeaseDuration, rec.AcquireTime, rec.RenewTime = "", time.Second, now, now
	return Write{Record: rec}, true
}

// Overdue tells whether the machine still holds a term that should have
// ended more than grace ago: the loop that runs it is stuck. Check uses it.
func (m *Machine) Overdue(now time.Time, grace time.Duration) bool {
	return m.leading && now.After(m.authorityEnd.Add(grace))
}
