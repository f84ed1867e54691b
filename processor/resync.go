package processor

import (
	"slices"
	"time"
)

// Resync scheduling: the one place where it is decided which handlers hear a
// resync, and whether there is one at all. The other packages only carry it
// out (docs/architecture.md, "Resync", follows it end to end).
//
// Each registration with a non-zero ResyncPeriod P has a next resync time,
// first set to (time of AddHandler) + P. The informer calls ShouldResync(now)
// on a timer; with no handler that has a period (the common case) the call
// does nothing and answers false; otherwise it starts a resync round:
//
//   - a handler is due when P > 0 and now is not before its next time;
//   - a due handler's next time becomes now + P, counted from now rather
//     than from the missed deadline, so that a stalled informer does not
//     fire a burst of catch-up resyncs;
//   - the round's set of due handlers replaces the previous round's.
//
// Until the next ShouldResync, Distribute(n, true) delivers only to the due
// handlers. A handler added during a round is not due in it.

// resyncStep applies the rule above to one handler: whether it is due at now
// and its next resync time afterwards.
func resyncStep(now, next time.Time, period time.Duration) (due bool, newNext time.Time) {
	if period <= 0 || now.Before(next) {
		return false, next
	}
	return true, now.Add(period)
}

// ShouldResync starts a resync round at now: it marks the handlers that are
// due, advances their schedules, and reports whether any handler is due. The
// informer's reflector calls it at every tick of its resync timer, and asks
// the queue for a resync only when it returns true. With no handler that
// wants resyncs it starts no round: the previous round's due set stays.
func (p *Processor) ShouldResync(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	regs := *p.regs.Load()
	if !slices.ContainsFunc(regs, func(r *Registration) bool { return r.resyncPeriod > 0 }) {
		return false
	}
	due := make(map[*Registration]bool)
	for _, r := range regs {
		isDue, next := resyncStep(now, r.nextResync, r.resyncPeriod)
		r.nextResync = next
		if isDue {
			due[r] = true
		}
	}
	p.due.Store(&recipients{due: due})
	return len(due) > 0
}

// ResyncInterval returns the shortest resync period among the current
// handlers, or 0 if none wants resyncs, for tests. It plays no part in the
// schedule; ShouldResync decides alone.
func (p *Processor) ResyncInterval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var shortest time.Duration
	for _, r := range *p.regs.Load() {
		if r.resyncPeriod > 0 && (shortest == 0 || r.resyncPeriod < shortest) {
			shortest = r.resyncPeriod
		}
	}
	return shortest
}
