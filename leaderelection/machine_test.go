package leaderelection

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// t0 is an arbitrary start; the machine only ever subtracts times.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newTestMachine(id string) *Machine {
	return NewMachine(Config{Identity: id})
}

// apply sends the machine's wanted write to the store and feeds the
// outcome back, as the Elector does, with the send time given.
func apply(t *testing.T, m *Machine, s *MemoryStore, now time.Time) error {
	t.Helper()
	rec, err := s.Get(t.Context())
	require.NoError(t, err)
	m.Tick(now)
	m.Observe(now, rec)
	w, ok := m.Next(now)
	if !ok {
		return errNoWrite
	}
	var out *Record
	if w.Create {
		out, err = s.Create(t.Context(), w.Record)
	} else {
		out, err = s.Update(t.Context(), w.Record)
	}
	m.Wrote(now, now, out, err)
	return err
}

var errNoWrite = errors.New("no write wanted")

func TestMachineAcquireAndRenew(t *testing.T) {
	s := &MemoryStore{}
	a := newTestMachine("a")
	require.NoError(t, apply(t, a, s, at(0)), "creates the lease")
	require.True(t, a.Leading(at(0)))
	require.Equal(t, at(DefaultRenewDeadline), a.AuthorityEnd(), "authority: send time plus renew deadline")
	rec, _ := s.Get(t.Context())
	require.Equal(t, "a", rec.HolderIdentity)
	require.Equal(t, int32(0), rec.LeaseTransitions)

	require.NoError(t, apply(t, a, s, at(2*time.Second)), "renews")
	require.Equal(t, at(2*time.Second+DefaultRenewDeadline), a.AuthorityEnd())
	rec, _ = s.Get(t.Context())
	require.Equal(t, int32(0), rec.LeaseTransitions, "a renew is no transition")
	require.True(t, rec.AcquireTime.Equal(at(0)), "a renew keeps the acquire time")
}

func TestMachineFollowerWaitsLeaseDurationOnItsOwnClock(t *testing.T) {
	s := &MemoryStore{}
	a, b := newTestMachine("a"), newTestMachine("b")
	require.NoError(t, apply(t, a, s, at(0)))
	// b first sees a's record at its own time 100s (its clock has any offset).
	bt := func(d time.Duration) time.Time { return at(100*time.Second + d) }
	require.ErrorIs(t, apply(t, b, s, bt(0)), errNoWrite)
	require.Equal(t, "a", b.Leader())
	require.ErrorIs(t, apply(t, b, s, bt(DefaultLeaseDuration-time.Nanosecond)), errNoWrite, "not expired yet")
	// a stops renewing; a steps down at its authority's end, 5 s before b may take over.
	a.Tick(at(DefaultRenewDeadline))
	require.False(t, a.Leading(at(DefaultRenewDeadline)))
	require.NoError(t, apply(t, b, s, bt(DefaultLeaseDuration)), "expired 15 s after b saw it change")
	require.True(t, b.Leading(bt(DefaultLeaseDuration)))
	rec, _ := s.Get(t.Context())
	require.Equal(t, "b", rec.HolderIdentity)
	require.Equal(t, int32(1), rec.LeaseTransitions)
}

func TestMachineRenewRestartsFollowerClock(t *testing.T) {
	s := &MemoryStore{}
	a, b := newTestMachine("a"), newTestMachine("b")
	require.NoError(t, apply(t, a, s, at(0)))
	require.ErrorIs(t, apply(t, b, s, at(0)), errNoWrite)
	require.NoError(t, apply(t, a, s, at(10*time.Second)))
	require.ErrorIs(t, apply(t, b, s, at(12*time.Second)), errNoWrite, "b saw a change at 12 s")
	require.ErrorIs(t, apply(t, b, s, at(26*time.Second)), errNoWrite, "14 s after the change b saw")
	require.NoError(t, apply(t, b, s, at(27*time.Second)))
}

// Clock steps: RenewTime is another machine's wall clock and is never
// compared with ours. A holder whose clock is an hour behind (or ahead)
// is judged by when we saw its record change.
func TestMachineClockStepsDoNotMatter(t *testing.T) {
	for _, skew := range []time.Duration{-time.Hour, time.Hour} {
		s := &MemoryStore{}
		a, b := newTestMachine("a"), newTestMachine("b")
		require.NoError(t, apply(t, a, s, at(skew)), "a's clock is off by %v", skew)
		require.ErrorIs(t, apply(t, b, s, at(0)), errNoWrite, "skew %v: a record that looks stale or future is still fresh", skew)
		require.ErrorIs(t, apply(t, b, s, at(DefaultLeaseDuration-time.Second)), errNoWrite)
		require.NoError(t, apply(t, b, s, at(DefaultLeaseDuration)))
	}
}

func TestMachineStepsDownAtRenewDeadline(t *testing.T) {
	s := &MemoryStore{}
	a := newTestMachine("a")
	require.NoError(t, apply(t, a, s, at(0)))
	outage := errors.New("503")
	s.Fail = func(string) error { return outage }
	for d := 2 * time.Second; d < DefaultRenewDeadline; d += 2 * time.Second {
		_, err := s.Get(t.Context())
		require.ErrorIs(t, err, outage)
		a.Tick(at(d))
		require.True(t, a.Leading(at(d)), "still within the renew deadline at %v", d)
	}
	a.Tick(at(DefaultRenewDeadline))
	require.False(t, a.Leading(at(DefaultRenewDeadline)))
	require.True(t, a.AuthorityEnd().IsZero())
	require.False(t, a.Overdue(at(time.Hour), 0), "stepped down: not overdue")
}

func TestMachineFailedRenewDoesNotExtend(t *testing.T) {
	a := newTestMachine("a")
	a.Observe(at(0), nil)
	w, ok := a.Next(at(0))
	require.True(t, ok)
	w.Record.ResourceVersion = "1"
	a.Wrote(at(0), at(0), &w.Record, nil)
	w, _ = a.Next(at(5 * time.Second))
	a.Wrote(at(5*time.Second), at(5*time.Second), nil, errors.New("timeout"))
	require.Equal(t, at(DefaultRenewDeadline), a.AuthorityEnd(), "only a success moves the authority")
	require.True(t, a.Overdue(at(DefaultRenewDeadline+3*time.Second), 2*time.Second), "nobody ticked it")
}

func TestMachineLosesToAnotherHolder(t *testing.T) {
	a := newTestMachine("a")
	a.Observe(at(0), nil)
	w, _ := a.Next(at(0))
	a.Wrote(at(0), at(0), &w.Record, nil)
	require.True(t, a.Leading(at(time.Second)))
	a.Observe(at(time.Second), &Record{HolderIdentity: "b", LeaseDuration: DefaultLeaseDuration, ResourceVersion: "9"})
	require.False(t, a.Leading(at(time.Second)), "someone else holds it")
}

func TestMachineConflictOneWinner(t *testing.T) {
	s := &MemoryStore{}
	a, b := newTestMachine("a"), newTestMachine("b")
	require.NoError(t, apply(t, a, s, at(0)))
	// A third party released it; both read the released record and try to
	// take it: one write wins.
	_, err := s.Update(t.Context(), mustRelease(t, s))
	require.NoError(t, err)
	rec, _ := s.Get(t.Context())
	a.Observe(at(2*time.Second), rec)
	b.Observe(at(2*time.Second), rec)
	wa, ok := a.Next(at(2 * time.Second))
	require.True(t, ok, "a released lease is free at once")
	wb, ok := b.Next(at(2 * time.Second))
	require.True(t, ok)
	outA, errA := s.Update(t.Context(), wa.Record)
	outB, errB := s.Update(t.Context(), wb.Record)
	a.Wrote(at(2*time.Second), at(2*time.Second), outA, errA)
	b.Wrote(at(2*time.Second), at(2*time.Second), outB, errB)
	require.NoError(t, errA)
	require.Error(t, errB, "b's write was based on a version a replaced")
	require.True(t, a.Leading(at(2*time.Second)))
	require.False(t, b.Leading(at(2*time.Second)))
}

func mustRelease(t *testing.T, s *MemoryStore) Record {
	t.Helper()
	rec, err := s.Get(t.Context())
	require.NoError(t, err)
	rec.HolderIdentity, rec.LeaseDuration = "", time.Second
	return *rec
}

func TestMachineRelease(t *testing.T) {
	s := &MemoryStore{}
	a, b := newTestMachine("a"), newTestMachine("b")
	require.NoError(t, apply(t, a, s, at(0)))
	require.ErrorIs(t, apply(t, b, s, at(0)), errNoWrite)
	w, ok := a.Release(at(time.Second))
	require.True(t, ok)
	require.False(t, a.Leading(at(time.Second)), "a stops leading before it writes the release")
	require.Equal(t, "", w.Record.HolderIdentity)
	out, err := s.Update(t.Context(), w.Record)
	require.NoError(t, err)
	a.Wrote(at(time.Second), at(time.Second), out, nil)
	require.False(t, a.Leading(at(time.Second)))
	require.NoError(t, apply(t, b, s, at(2*time.Second)), "b takes a released lease at its next retry")
	rec, _ := s.Get(t.Context())
	require.Equal(t, int32(1), rec.LeaseTransitions)

	_, ok = a.Release(at(3 * time.Second))
	require.False(t, ok, "nothing to release: b holds it")
}

// A Lease deleted under its holder (by hand, or with its namespace) is no
// free lease: a follower that saw the holder waits for that record's
// expiry on its own clock before creating it again, and the holder steps
// down as soon as it reads that the lease is gone, so that two never lead
// at once.
func TestMachineDeletedLeaseIsNoFreeLease(t *testing.T) {
	s := &MemoryStore{}
	a, b := newTestMachine("a"), newTestMachine("b")
	require.NoError(t, apply(t, a, s, at(0)))
	require.ErrorIs(t, apply(t, b, s, at(time.Second)), errNoWrite, "b follows a")
	s.Delete()

	require.ErrorIs(t, apply(t, b, s, at(2*time.Second)), errNoWrite, "a's record has not expired on b's clock")
	require.False(t, b.Leading(at(2*time.Second)))
	a.Observe(at(2*time.Second), nil)
	require.False(t, a.Leading(at(2*time.Second)), "a leader whose lease is gone steps down")

	require.ErrorIs(t, apply(t, b, s, at(DefaultLeaseDuration)), errNoWrite, "still within the lease b last saw")
	require.NoError(t, apply(t, b, s, at(time.Second+DefaultLeaseDuration)), "expired on b's clock: b creates it")
	require.True(t, b.Leading(at(time.Second+DefaultLeaseDuration)))
}
