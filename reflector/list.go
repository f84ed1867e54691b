package reflector

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// stepList is the step of Listing and Relisting: get one complete snapshot
// into the store. WatchList is tried first when enabled; if it fails in a
// way a list would not, the step lists at once instead of waiting.
func (r *Reflector) stepList(ctx context.Context) (reaction, error) {
	if r.wantWatchList() {
		rc, cause, fallback := r.streamSnapshot(ctx)
		if !fallback {
			return rc, cause
		}
		if rc.consistent {
			r.m.rvUnusable = true
		}
	}
	return r.listSnapshot(ctx)
}

// wantWatchList decides whether this snapshot is streamed.
func (r *Reflector) wantWatchList() bool {
	lwSupports := true
	if s, ok := r.lw.(WatchListSupport); ok {
		lwSupports = s.SupportsWatchList()
	}
	return useWatchList(r.opts.WatchList, lwSupports, r.m.watchListRefused)
}

// listSnapshot lists everything and replaces the store's content with it.
func (r *Reflector) listSnapshot(ctx context.Context) (reaction, error) {
	rv := listResourceVersion(r.m.lastSyncRV, r.m.rvUnusable)
	items, listRV, paginated, err := r.listAll(ctx, rv)
	if err != nil {
		if ctx.Err() != nil {
			return stop, nil
		}
		e := r.report(opList, classifyKind, err)
		return afterListError(e.Kind, rv, r.m.synced), e
	}
	if rv == "0" && paginated {
		r.m.paginatedBefore = true
	}
	return r.replace(items, listRV, false)
}

// replace hands a complete snapshot to the store and, if the store takes
// it, records rv as the point the watch resumes from.
func (r *Reflector) replace(items []runtime.Object, rv string, viaWatchList bool) (reaction, error) {
	if err := r.store.Replace(items, rv); err != nil {
		// The store may hold half of it: only a new snapshot repairs that.
		e := r.report(opStore, KindStore, fmt.Errorf("replace: %w", err))
		return reaction{next: listState(r.m.synced), backoff: true}, e
	}
	r.setSynced(rv, viaWatchList)
	return reaction{next: StateWatching}, nil
}

// listAll reads every page of a list at rv and returns the admitted items,
// the list's resourceVersion (the first page's: the snapshot's point in
// time), and whether it came in more than one page.
//
// Paging follows client-go's pager. Pages after the first carry the
// continue token and no resourceVersion (the server refuses both). If the
// token expires between pages (410: etcd compacted the snapshot the pages
// were cut from), the pages read so far are discarded and the list is made
// again in one unpaged request at the resourceVersion first asked for;
// should that fail too, listSnapshot's caller decides (a 410 there leads to
// a consistent relist).
//
// A server cannot make it page for ever: a continue token seen before in
// this list, or more than MaxListPages pages or MaxListItems objects, ends
// it with an error (see nextPage).
func (r *Reflector) listAll(ctx context.Context, rv string) (items []runtime.Object, listRV string, paginated bool, err error) {
	opts := metav1.ListOptions{ResourceVersion: rv, Limit: pageLimit(r.opts.PageSize, rv, r.m.paginatedBefore)}
	seen := newTokenSet()
	for pages := 0; ; pages++ {
		page, err := r.listPage(ctx, opts)
		if err != nil {
			if opts.Continue == "" || !apierrors.IsResourceExpired(err) {
				return nil, "", paginated, err
			}
			r.report(opList, KindExpired, fmt.Errorf("continue token expired, listing again unpaged: %w", err))
			items, listRV, err = r.listUnpaged(ctx, rv)
			return items, listRV, paginated, err
		}
		pageRV, next := "", ""
		items, pageRV, next, err = r.absorbPage(page, items)
		if err != nil {
			return nil, "", paginated, err
		}
		if pages == 0 {
			listRV = pageRV
		}
		if next == "" {
			return items, listRV, paginated, nil
		}
		if err := nextPage(pages+1, seen.add(next), r.opts.listLimits()); err != nil {
			return nil, "", paginated, err
		}
		paginated = true
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = next, "", ""
	}
}

// listUnpaged lists at rv in one request: the fallback after a continue
// token expired.
func (r *Reflector) listUnpaged(ctx context.Context, rv string) ([]runtime.Object, string, error) {
	page, err := r.listPage(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return nil, "", err
	}
	items, listRV, _, err := r.absorbPage(page, nil)
	return items, listRV, err
}

// tokenSet remembers the continue tokens of one list, by hash: a token can
// be as long as the server likes, and a page cap's worth of them need not
// be kept. A collision would end a list early, with an error and a retry;
// at 64 bits, among at most MaxListPages tokens, it does not happen.
//
// Not safe for concurrent use: it belongs to one list, on the reflector's
// goroutine.
type tokenSet struct {
	seed maphash.Seed
	seen map[uint64]struct{}
}

func newTokenSet() tokenSet {
	return tokenSet{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
}

// add records tok and reports whether it was there already.
func (s tokenSet) add(tok string) (repeated bool) {
	h := maphash.String(s.seed, tok)
	if _, ok := s.seen[h]; ok {
		return true
	}
	s.seen[h] = struct{}{}
	return false
}

// listPage makes one List call.
func (r *Reflector) listPage(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	r.pub.update(func(p *published) { p.listRequests++ })
	page, err := r.lw.List(ctx, opts)
	if err == nil && (page == nil || isNilPointer(page)) {
		err = fmt.Errorf("%w: ListerWatcher returned a nil list", ErrNotList)
	}
	return page, err
}

// absorbPage appends a page's admitted items to items and returns the
// page's resourceVersion and continue token. Items that fail the type check
// are reported and left out. A page that would take the list past
// MaxListItems is refused as soon as it does (ErrListTooLarge).
//
// Each item is copied out of the page (EachListItemWithAlloc) rather than
// pointed into it: a pointer into the page's Items array would keep the
// whole array, every object of the page, alive as long as any one of them
// stays in the cache.
func (r *Reflector) absorbPage(page runtime.Object, items []runtime.Object) ([]runtime.Object, string, string, error) {
	lm, err := meta.ListAccessor(page)
	if err != nil {
		return nil, "", "", fmt.Errorf("%w: %T: %v", ErrNotList, page, err)
	}
	if items == nil {
		items = make([]runtime.Object, 0, meta.LenList(page))
	}
	lim := r.opts.listLimits()
	err = meta.EachListItemWithAlloc(page, func(obj runtime.Object) error {
		if err := roomFor(len(items), lim); err != nil {
			return err
		}
		if _, err := r.check.admitNamed(obj); err != nil {
			r.report(opList, KindWrongType, err)
			return nil
		}
		items = append(items, obj)
		return nil
	})
	if errors.Is(err, ErrListTooLarge) {
		return nil, "", "", err
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("%w: %v", ErrNotList, err)
	}
	return items, lm.GetResourceVersion(), lm.GetContinue(), nil
}
