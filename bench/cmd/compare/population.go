package main

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer/internal/realpod"
)

// The populations of the heap rows besides the first list: internal/realpod
// says why they matter.

// uniqueEvery and uniqueOf: pod i has a template of its own when
// i%uniqueOf < uniqueEvery, 30% of the pods.
const uniqueEvery, uniqueOf = realpod.UniqueEvery, realpod.UniqueOf

// restarted is pod i of the population pod as a kubelet writes it after
// the app container's restart at (realpod.Restarted), stamped with the
// time of the write.
func restarted(pod func(int) *corev1.Pod, i, round int, at time.Time) *corev1.Pod {
	p := realpod.Restarted(pod(i), i, round, at)
	p.Annotations[writtenAt] = strconv.FormatInt(at.UnixNano(), 10)
	return p
}

// churnOrder is every pod index below n once, in an order fixed by round.
func churnOrder(n, round int) []int { return realpod.ChurnOrder(n, round) }
