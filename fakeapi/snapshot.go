package fakeapi

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Reading the past. A paged list must show one consistent state even when
// writes land between pages, and an Exact list asks for the state at an old
// RV. etcd keeps old revisions for this; we keep the event log instead and
// rebuild the past by undoing the events newer than the requested RV. Only
// the keys those events touched differ from the present, so the rebuild is
// an overlay on the current objects, not a copy of them.

// listQuery selects one page of a resource.
type listQuery struct {
	res *resourceInfo
	// namespace limits the page to one namespace; "" means all.
	namespace string
	// atRV is the state to read; 0 means the current state.
	atRV uint64
	// notOlderThan, when set, fails the read with "too large resource
	// version" if the server has not reached it.
	notOlderThan uint64
	// startKey is the first key to consider (inclusive); "" means the start.
	startKey string
	// limit caps the number of items; 0 means no cap.
	limit int
	// match filters objects (selectors); nil accepts every object.
	match func(runtime.Object) bool
}

// listPage is what list returns.
type listPage struct {
	items []runtime.Object
	// rv is the resourceVersion of the state the page shows.
	rv uint64
	// nextKey is the key to continue from; "" when the list is complete.
	nextKey string
	// remaining estimates the items after this page; -1 when unknown.
	remaining int64
}

// errCompacted means the requested state is older than the log's history.
// Callers turn it into the 410 that fits their verb.
type errCompacted struct{}

func (errCompacted) Error() string { return "fakeapi: resource version compacted" }

// list reads one page. It fails with a too-large error for a future RV and
// with errCompacted for a forgotten one.
func (s *store) list(q listQuery) (listPage, error) {
	snap := s.rv
	if q.notOlderThan > s.rv {
		return listPage{}, tooLargeResourceVersion(q.notOlderThan, s.rv)
	}
	if q.atRV != 0 {
		if q.atRV > s.rv {
			return listPage{}, tooLargeResourceVersion(q.atRV, s.rv)
		}
		if !s.log.available(q.atRV) {
			return listPage{}, errCompacted{}
		}
		snap = q.atRV
	}
	b := s.bucket(q.res)
	overlay := s.pastOverlay(q.res, snap)
	cur := b.sortedKeys()
	extra := overlayOnlyKeys(overlay, b)

	prefix := ""
	if q.namespace != "" && !q.res.ClusterScoped {
		prefix = q.namespace + "/"
	}
	from := max(q.startKey, prefix)
	i := sort.SearchStrings(cur, from)
	j := sort.SearchStrings(extra, from)
	page := listPage{rv: snap, remaining: -1}
	for {
		key, fromCur, ok := nextMerged(cur, extra, i, j)
		if !ok || !strings.HasPrefix(key, prefix) {
			break
		}
		if q.limit > 0 && len(page.items) == q.limit {
			page.nextKey = key
			if len(overlay) == 0 && q.match == nil {
				page.remaining = int64(prefixEnd(cur, prefix) - i)
			}
			break
		}
		if fromCur {
			i++
		} else {
			j++
		}
		obj, changed := overlay[key]
		if !changed {
			obj = b.objects[key]
		}
		if obj != nil && (q.match == nil || q.match(obj)) {
			page.items = append(page.items, obj)
		}
	}
	return page, nil
}

// pastOverlay maps each key of res written after rv to its state at rv
// (nil: it did not exist then).
func (s *store) pastOverlay(res *resourceInfo, rv uint64) map[string]runtime.Object {
	if rv >= s.rv {
		return nil
	}
	live := s.log.live()
	overlay := map[string]runtime.Object{}
	// Walk newest to oldest: the last assignment to a key comes from its
	// oldest event after rv, whose "before" state is the state at rv.
	for i := len(live) - 1; i >= 0 && live[i].rv > rv; i-- {
		ev := live[i]
		if ev.res == res {
			overlay[ev.key] = ev.prev
		}
	}
	return overlay
}

// overlayOnlyKeys returns, sorted, the overlay keys that no longer exist now.
func overlayOnlyKeys(overlay map[string]runtime.Object, b *bucket) []string {
	var keys []string
	for k := range overlay {
		if _, now := b.objects[k]; !now {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// nextMerged returns the smaller of cur[i] and extra[j].
func nextMerged(cur, extra []string, i, j int) (key string, fromCur, ok bool) {
	switch {
	case i < len(cur) && (j >= len(extra) || cur[i] < extra[j]):
		return cur[i], true, true
	case j < len(extra):
		return extra[j], false, true
	}
	return "", false, false
}

// prefixEnd returns the index just past the keys with the given prefix.
func prefixEnd(keys []string, prefix string) int {
	if prefix == "" {
		return len(keys)
	}
	return sort.Search(len(keys), func(i int) bool {
		return keys[i] > prefix && !strings.HasPrefix(keys[i], prefix)
	})
}

// watchBatch is what eventsAfter returns: the next events of one resource
// and the cursor to ask from next time.
type watchBatch struct {
	events []event
	// next is the RV the watcher has now seen everything up to.
	next uint64
}

// eventsAfter returns up to limit events of res with an RV above cursor. When
// it returns fewer than limit, the watcher is caught up to the current RV.
func (s *store) eventsAfter(res *resourceInfo, cursor uint64, limit int) (watchBatch, error) {
	if !s.log.available(cursor) {
		return watchBatch{}, errCompacted{}
	}
	live := s.log.live()
	batch := watchBatch{}
	i := s.log.indexAfter(cursor)
	for ; i < len(live) && len(batch.events) < limit; i++ {
		if live[i].res == res {
			batch.events = append(batch.events, live[i])
		}
	}
	if i < len(live) {
		batch.next = live[i-1].rv
	} else {
		// A watch from a future RV keeps its cursor: events up to it are
		// skipped, as the real watch cache does.
		batch.next = max64(cursor, s.rv)
	}
	return batch, nil
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
