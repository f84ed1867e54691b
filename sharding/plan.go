package sharding

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"
)

// ShardOf is the shard a key belongs to: its FNV-1a hash modulo shards.
// Every replica computes the same answer from the key alone.
func ShardOf(key string, shards int) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum64() % uint64(shards))
}

// score is the rendezvous (highest random weight) score of a member for a
// shard: each shard prefers the members in the order of their scores, and
// that order does not depend on who else is there.
func score(member string, shard int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(strconv.Itoa(shard)))
	return h.Sum64()
}

// Plan returns who should hold each shard, given who holds it now
// (current[i], "" for nobody or someone gone) and the live members. Each
// member gets a fair share: K/N shards, and K mod N of them one more.
// Only what must move moves: a member keeps its current shards up to its
// share (its best-scored ones first); the shards that are free, or over
// someone's share, go to the members below their share, each to the one
// that scores highest for it. A member joining therefore takes shards
// only from those over the new share, and a member leaving gives its
// shards away without moving anyone else's.
//
// Plan is pure: every replica computes it from what it sees, and replicas
// that see the same thing agree.
func Plan(current []string, members []string) []string {
	out := make([]string, len(current))
	members = slices.Compact(slices.Sorted(slices.Values(members)))
	if len(members) == 0 {
		return out
	}
	floor, extra := len(current)/len(members), len(current)%len(members)
	count := map[string]int{}
	held := map[string][]int{}
	for i, m := range current {
		if _, ok := slices.BinarySearch(members, m); ok {
			held[m] = append(held[m], i)
		}
	}
	// Keep: up to the floor each, best-scored first; then one more for
	// the members holding the most, while extra slots last.
	for _, m := range members {
		slices.SortFunc(held[m], func(a, b int) int { return cmp.Compare(score(m, b), score(m, a)) })
		for _, s := range held[m][:min(floor, len(held[m]))] {
			out[s], count[m] = m, count[m]+1
		}
	}
	byHeld := slices.Clone(members)
	slices.SortStableFunc(byHeld, func(a, b string) int { return cmp.Compare(len(held[b]), len(held[a])) })
	for _, m := range byHeld {
		if extra > 0 && len(held[m]) > floor {
			out[held[m][floor]], count[m] = m, count[m]+1
			extra--
		}
	}
	// Give: each free shard to the best-scored member below the floor, or
	// at the floor while extra slots last.
	for s := range out {
		if out[s] != "" {
			continue
		}
		best := ""
		for _, needy := range []bool{true, false} {
			for _, m := range members {
				fits := count[m] < floor
				if !needy {
					fits = count[m] == floor && extra > 0
				}
				if fits && (best == "" || score(m, s) > score(best, s)) {
					best = m
				}
			}
			if best != "" {
				break
			}
		}
		if count[best] == floor {
			extra--
		}
		out[s], count[best] = best, count[best]+1
	}
	return out
}
