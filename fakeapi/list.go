package fakeapi

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serveList answers GET on a collection.
//
// The resourceVersion rules are the real server's:
//
//	resourceVersion  resourceVersionMatch  limit   state served
//	""               -                     any     the latest (a consistent read)
//	"0"              - / NotOlderThan      any     any state; we serve the latest
//	"N"              - / NotOlderThan      unset   not older than N: the latest
//	"N"              -                     set     exactly N (legacy paging rule)
//	"N"              Exact                 any     exactly N
//
// A future N gets "Too large resource version"; an N older than the
// compacted history gets 410 Expired.
func (s *Server) serveList(w http.ResponseWriter, r *http.Request, req requestInfo) {
	opts, enc, q, ok := s.collectionRequest(w, r, req)
	if !ok {
		return
	}
	q.limit = int(opts.Limit)
	continuing, err := planList(&q, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.mu.Lock()
	page, err := s.store.list(q)
	s.mu.Unlock()
	if errors.As(err, new(errCompacted)) {
		err = listTooOld()
		if continuing {
			err = continueTooOld(encodeContinue(-1, q.startKey))
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeList(w, r, enc, req, page)
}

// collectionRequest reads what a list or a deletecollection of req's
// collection needs: its options, the encoding to answer in, and the query
// its selectors make. It answers a bad request itself, and then ok is false.
func (s *Server) collectionRequest(w http.ResponseWriter, r *http.Request, req requestInfo) (opts metainternalversion.ListOptions, enc encoding, q listQuery, ok bool) {
	opts, err := parseListOptions(r, req)
	if err == nil {
		enc, err = s.negotiateResource(r, req)
	}
	if err != nil {
		s.writeError(w, r, err)
		return opts, enc, q, false
	}
	f := newFilter(req, opts)
	return opts, enc, listQuery{res: req.res, namespace: req.namespace, match: f.selectorMatch()}, true
}

// writeList answers with page, as the list kind of req's resource.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, enc encoding, req requestInfo, page listPage) {
	list, err := s.buildList(req.res, page)
	if err != nil {
		s.writeError(w, r, apierrors.NewInternalError(err))
		return
	}
	s.writeObject(w, r, enc, http.StatusOK, list)
}

// planList fills the query's read position from the options, and reports
// whether the request continues an earlier list.
func planList(q *listQuery, opts metainternalversion.ListOptions) (bool, error) {
	if opts.Continue != "" {
		if opts.ResourceVersion != "" {
			return true, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		tok, err := decodeContinue(opts.Continue)
		if err != nil {
			return true, err
		}
		q.startKey = tok.Start
		if tok.RV > 0 {
			q.atRV = uint64(tok.RV)
		}
		return true, nil
	}
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return false, err
	}
	exact := opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
		(opts.ResourceVersionMatch == "" && rv != 0 && opts.Limit > 0)
	if exact {
		q.atRV = rv
	} else {
		q.notOlderThan = rv
	}
	return false, nil
}

// buildList wraps a page in the resource's list type (e.g. PodList). Items
// are copied by value out of the immutable stored objects, and their
// apiVersion and kind are cleared, as on the real server's lists.
func (s *Server) buildList(ri *resourceInfo, page listPage) (runtime.Object, error) {
	list, err := s.newList(ri)
	if err != nil {
		return nil, err
	}
	list.GetObjectKind().SetGroupVersionKind(ri.listKind)
	if err := meta.SetList(list, page.items); err != nil {
		return nil, err
	}
	if !ri.unstructured { // custom resources keep their kind in a list, as on the real server
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			item.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			return nil
		})
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	lm.SetResourceVersion(formatRV(page.rv))
	if page.nextKey != "" {
		lm.SetContinue(encodeContinue(int64(page.rv), page.nextKey))
		if page.remaining >= 0 {
			remaining := page.remaining
			lm.SetRemainingItemCount(&remaining)
		}
	}
	return list, nil
}
