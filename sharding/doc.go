// Package sharding splits one controller's keys over N replicas with K
// shard Leases, each a mutual-exclusion lease exactly like a leader's
// (package leaderelection: the same Machine, the same Elector, the same
// guarantee and the same fencing limit).
//
//	key --ShardOf: fnv(key) mod K--> shard s --lease "<name>-shard-<s>"--> the one replica holding it
//
// A replica processes a key only while it holds the key's shard. Every
// replica runs its informers and queues every key, as a warm standby
// does; its workers ask Coordinator.Enter, which lets the key through
// under the shard's term, or parks it until this replica takes the shard
// (then it goes back to the queue at once); a parked key is let go when
// its object's delete comes through (Options.Exists), so the parked keys
// never outnumber the cache's. A reconcile.Loop does this with Gate:
// coordinator.
//
// # Who holds what
//
// Each replica holds a member lease of its own ("<name>-member-<id>") and
// lists the group's leases once per RetryPeriod. A member whose lease has
// not changed for its LeaseDuration, on the reader's clock, is gone (the
// follower's rule). Plan, a pure function of who holds each shard now and
// who is alive, gives every member a fair share (K/N, some one more) and
// moves only what must move: members keep their shards up to their share,
// and the shards that are free or over someone's share go to the members
// below it, each by rendezvous hashing. Who holds each shard is read from
// the same List, so replicas planning at the same moment see the same
// holders and agree on who takes a free shard. Each shard's Elector wants
// its lease only while the plan gives it to this replica; a replica that
// must hand a shard over ends the shard's term, waits until its workers in
// that shard have left, and only then releases the lease, which the new
// owner takes at its next retry. It hands a shard over only once its plans
// have given it away for a RetryPeriod: replicas learn of a join or a
// death each at its own next List, up to a RetryPeriod apart, and a plan
// made in between, by one that still counts a dead member as alive, would
// move a shard for nothing.
//
// Holds answers "may I write for this key now": it turns false when the
// shard's term ends, while a reconcile admitted under the term may still
// be running with its context done. The lease is not released before that
// reconcile returns, so no other replica processes the key meanwhile.
//
// A replica that crashes stops holding its shards at their renew
// deadline; the others see its member lease and shard leases expire and
// take its shards within LeaseDuration plus one RetryPeriod of its last
// renew. One that stops gracefully releases everything at once.
package sharding
