package reflector

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/objkey"
)

// list is the I/O of a listing: get one complete snapshot into the store,
// by WatchList when the reflector wants it, else by a paged List.
func (r *Reflector) list(ctx context.Context, s listing) input {
	if s.via == viaAny && r.wantWatchList() {
		return r.streamSnapshot(ctx, s)
	}
	return r.listSnapshot(ctx, s)
}

// wantWatchList decides whether this snapshot is streamed.
func (r *Reflector) wantWatchList() bool {
	lwSupports := true
	if s, ok := r.lw.(watchListSupport); ok {
		lwSupports = s.SupportsWatchList()
	}
	return useWatchList(r.opts.WatchList, lwSupports, r.m.watchListRefused)
}

// listSnapshot lists everything and replaces the store's content with it.
func (r *Reflector) listSnapshot(ctx context.Context, s listing) input {
	rv := listResourceVersion(s.rv, s.consistent)
	var items []runtime.Object
	var listRV string
	var pages int
	var err error
	if s.via == viaUnpaged {
		items, listRV, err = r.listUnpaged(ctx, rv)
	} else {
		items, listRV, pages, err = r.listAll(ctx, rv)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctxDone{}
		}
		return listFailed{fault: r.fail(opList, classifyKind, err), rv: rv, laterPage: pages > 0}
	}
	in := r.replace(items, listRV, false)
	if st, ok := in.(snapshotStored); ok {
		// The list an unpaged one repeats came in pages.
		st.paged = rv == "0" && (pages > 1 || s.via == viaUnpaged)
		return st
	}
	return in
}

// replace hands a complete snapshot to the store: stored, with rv, if the
// store takes it.
func (r *Reflector) replace(items []runtime.Object, rv string, viaWatchList bool) input {
	if err := r.store.Replace(items, rv); err != nil {
		// The store may hold half of it: only a new snapshot repairs that.
		return storeFailed{r.fail(opStore, KindStore, fmt.Errorf("replace: %w", err))}
	}
	r.publishSnapshot(rv, viaWatchList)
	return snapshotStored{rv: rv}
}

// listAll reads every page of a list at rv and returns the admitted items,
// the list's resourceVersion (the first page's: the snapshot's point in
// time), and the pages it read: on a failure, those before the one that
// failed.
//
// Paging follows client-go's pager. Pages after the first carry the
// continue token and no resourceVersion (the server refuses both). If the
// token expires between pages (410: etcd compacted the snapshot the pages
// were cut from), the transition table has the list made again in one
// unpaged request (viaUnpaged) at the resourceVersion first asked for.
//
// A server cannot make it page for ever: a continue token seen before in
// this list, or more than MaxListPages pages or MaxListItems objects, ends
// it with an error (see nextPage).
func (r *Reflector) listAll(ctx context.Context, rv string) (items []runtime.Object, listRV string, pages int, err error) {
	opts := metav1.ListOptions{ResourceVersion: rv, Limit: pageLimit(r.opts.PageSize, rv, r.m.paginatedBefore)}
	seen := newTokenSet()
	for ; ; pages++ {
		page, err := r.listPage(ctx, opts, pageRoom(len(items), r.opts.listLimits()))
		if err != nil {
			return nil, "", pages, err
		}
		pageRV, next := "", ""
		items, pageRV, next, err = r.absorbPage(page, items)
		if err != nil {
			return nil, "", pages, err
		}
		if pages == 0 {
			listRV = pageRV
		}
		if next == "" {
			return items, listRV, pages + 1, nil
		}
		if err := nextPage(pages+1, seen.add(next), r.opts.listLimits()); err != nil {
			return nil, "", pages, err
		}
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = next, "", ""
	}
}

// listUnpaged lists at rv in one request: the retry after a continue
// token expired.
func (r *Reflector) listUnpaged(ctx context.Context, rv string) ([]runtime.Object, string, error) {
	page, err := r.listPage(ctx, metav1.ListOptions{ResourceVersion: rv}, pageRoom(0, r.opts.listLimits()))
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

// listPage makes one List call, for a page of at most room objects when
// the ListerWatcher can refuse a larger one before decoding it
// (itemCapLister); otherwise absorbPage counts the decoded ones.
func (r *Reflector) listPage(ctx context.Context, opts metav1.ListOptions, room int) (runtime.Object, error) {
	r.pub.update(func(p *published) { p.listRequests++ })
	var page runtime.Object
	var err error
	if lw, ok := r.lw.(itemCapLister); ok {
		page, err = lw.ListAtMost(ctx, opts, room)
		err = pageRefused(err, r.opts.listLimits())
	} else {
		page, err = r.lw.List(ctx, opts)
	}
	if err == nil && objkey.IsNil(page) {
		err = fmt.Errorf("%w: ListerWatcher returned a nil list", errNotList)
	}
	return page, err
}

// absorbPage appends a page's admitted items to items and returns the
// page's resourceVersion and continue token. Items that fail admitObject
// (their type, name or scope) are reported and left out. A page that would take the list past
// MaxListItems is refused as soon as it does (ErrListTooLarge).
//
// Each item is copied out of the page (EachListItemWithAlloc) rather than
// pointed into it: a pointer into the page's Items array would keep the
// whole array, every object of the page, alive as long as any one of them
// stays in the cache.
func (r *Reflector) absorbPage(page runtime.Object, items []runtime.Object) ([]runtime.Object, string, string, error) {
	lm, err := meta.ListAccessor(page)
	if err != nil {
		return nil, "", "", fmt.Errorf("%w: %T: %v", errNotList, page, err)
	}
	if items == nil {
		items = make([]runtime.Object, 0, meta.LenList(page))
	}
	lim := r.opts.listLimits()
	err = meta.EachListItemWithAlloc(page, func(obj runtime.Object) error {
		if err := roomFor(len(items), lim); err != nil {
			return err
		}
		if _, err := r.admitObject(obj); err != nil {
			r.report(opList, classifyKind, err)
			return nil
		}
		items = append(items, obj)
		return nil
	})
	if errors.Is(err, ErrListTooLarge) {
		return nil, "", "", err
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("%w: %v", errNotList, err)
	}
	return items, lm.GetResourceVersion(), lm.GetContinue(), nil
}
