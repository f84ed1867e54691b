package fakeapi

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// verbDeleteCollection is DELETE on a collection: delete every object
// the label and field selectors pick, each as its own DELETE would (pods
// in two steps, objects with finalizers only marked). The answer is the
// list of the objects as they were before, as on the real server.
// Namespaces have no deletecollection, and neither has a namespaced
// resource across all namespaces (405).
const verbDeleteCollection = "deletecollection"

func (s *Server) serveDeleteCollection(w http.ResponseWriter, r *http.Request, req requestInfo) {
	_, enc, q, ok := s.collectionRequest(w, r, req)
	if !ok {
		return
	}
	var page listPage
	_, err := s.writeLocked(func(st *store) (runtime.Object, error) {
		var err error
		if page, err = st.list(q); err != nil {
			return nil, err
		}
		for _, obj := range page.items {
			m, _ := meta.Accessor(obj)
			if _, err := s.deleteOne(st, req, m.GetNamespace(), m.GetName(), preconditions{}, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeList(w, r, enc, req, page)
}

// deleteOne deletes one object the way a client's DELETE does, with the
// options' grace period and propagation policy (gc.go).
func (s *Server) deleteOne(st *store, req requestInfo, namespace, name string, pre preconditions, opts metav1.DeleteOptions) (runtime.Object, error) {
	policy := metav1.DeletePropagationBackground
	if opts.PropagationPolicy != nil {
		policy = *opts.PropagationPolicy
	} else if opts.OrphanDependents != nil && *opts.OrphanDependents {
		policy = metav1.DeletePropagationOrphan
	}
	switch policy {
	case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("propagationPolicy %q is not one of Background, Foreground, Orphan", policy))
	}
	return st.deleteWithPolicy(s.reg, req.res, namespace, name, pre, opts.GracePeriodSeconds, policy)
}
