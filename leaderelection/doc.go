// Package leaderelection lets several replicas of a controller agree on
// one leader through a coordination.k8s.io/v1 Lease, as client-go's
// tools/leaderelection does: Kubernetes stores the Lease in etcd and
// updates it with optimistic concurrency on its resourceVersion, so no
// protocol of our own is needed.
//
//	Machine   the lease rule, pure: time and the server's answers in, writes out (machine.go)
//	Elector   runs a Machine on one goroutine against a LeaseStore, with callbacks (elector.go)
//	LeaseLock the LeaseStore of a real Lease, through package client (lease_store.go)
//	MemoryStore  the same in memory, for tests (store.go)
//	Gate      where a warm standby's workers wait for a term (gate.go)
//
// # The rule
//
// Every RetryPeriod (2 s) each candidate reads the Lease. A follower
// notes, on its own monotonic clock, when it last saw the record change;
// once LeaseDuration (15 s, the holder's promise, written in the Lease)
// has passed since then without a change, or the holder is "" (released),
// it writes itself in as holder, based on the resourceVersion it read. Of
// candidates racing, the server accepts one write and refuses the others
// with a conflict. The holder renews every RetryPeriod. A leader's
// authority ends at the send time of its last successful renew plus
// RenewDeadline (10 s): the Elector cancels the term's context then, by a
// timer that does not wait for a stuck request, and steps down.
// leaseTransitions counts the changes of holder.
//
// No candidate compares its clock with another's: RenewTime and
// AcquireTime are written for people to read, and a follower's expiry
// counts from when it saw the record change.
//
// # The guarantee
//
// At most one candidate believes it leads at any instant, provided the
// candidates' clocks run at rates that differ by less than a factor
// sqrt(LeaseDuration/RenewDeadline) (with the defaults, sqrt(1.5), 22%;
// real clocks drift by parts per million). Why: a follower saw the
// leader's last successful renew no earlier than it was sent, and waits
// LeaseDuration on its clock from then; the leader stops RenewDeadline on
// its clock after sending it. If the rates differ by a factor of at most
// r, the leader stops within RenewDeadline×r of real time and the
// follower waits at least LeaseDuration/r, and RenewDeadline×r <
// LeaseDuration/r. A leader that cannot renew (the server answers 503,
// the network is cut) therefore steps down before anyone can take over,
// and nobody leads while nobody can write.
//
// A deleted Lease (by hand, or with its namespace) is no free lease: a
// candidate that saw the last holder waits for that record's expiry before
// creating it again, and the holder steps down at its next read. The one
// gap is a candidate that never saw the record, one started after the
// deletion: it creates the Lease at once, and may lead for up to one
// RetryPeriod beside the old holder, which learns of the deletion at its
// next round (TestMachineDeletedLeaseIsNoFreeLease). Do not delete a
// Lease in use.
//
// # What a Lease cannot give: fencing
//
// The guarantee is about the processes' beliefs, measured on their
// clocks. A process that is paused (SIGSTOP, a long GC or swap, a
// suspended VM) between checking its term and acting does not run its
// clock-driven step-down either: when it resumes, the term's context
// reports the end at once (its Err reads the monotonic clock, so no
// worker is admitted by a Gate, and a reconcile.Loop's reconcile that
// checks its context sees the end, before the overdue watchdog has run;
// a context you derive yourself learns it only through Done, when the
// watchdog runs), but a write it had already decided to make may go out
// after a successor has taken over. A Lease has no fencing token that
// the API server would check on the controller's writes. What a
// controller should do:
//
//   - Write with the resourceVersion it read (Update, not blind Patch or
//     Apply with force): a stale leader's write then fails with a conflict
//     if the successor has written the object since.
//   - Check the term's context right before each write, and keep each
//     reconcile short, so the window is the pause itself.
//   - Make reconciles idempotent: the successor redoes what the paused
//     leader was doing, and the two converge on the same object.
//
// # Differences from client-go
//
// An Elector that loses its lease keeps campaigning instead of returning,
// so a warm standby can lead again without a restart; OnStoppedLeading is
// called once per term, after OnStartedLeading returned, and not at all
// if the candidate never led. The next term, and a release, wait for the
// last term's OnStartedLeading to return, so in-flight work of one term
// never overlaps the next. A follower retries after a random time between
// half a RetryPeriod and one (client-go: between one and 2.2), and at the
// moment the lease it watches expires, so a released lease is taken
// within a RetryPeriod and a dead leader is replaced within LeaseDuration
// plus a RetryPeriod of its last renew. docs/fleet.md shows the sequence
// and the measured figures.
package leaderelection
