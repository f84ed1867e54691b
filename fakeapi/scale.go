package fakeapi

import (
	"fmt"
	"net/http"
	"reflect"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/admission"
	"github.com/seed31a95821/informer/fakeapi/internal/patch"
)

// The scale subresource: {name}/scale reads and writes a workload's
// replica count through a small object of its own, autoscaling/v1 Scale,
// so that kubectl scale and autoscalers need not know the workload's
// type. A write changes only spec.replicas of the stored object (and so
// bumps its generation); the Scale's status is the workload's.

var scaleKind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// replicaFields are the fields of a workload that a Scale shows.
type replicaFields struct {
	specReplicas   reflect.Value // *int32
	selector       reflect.Value // *metav1.LabelSelector
	statusReplicas reflect.Value // int32
}

// replicasOf finds the fields, or reports why the type has none.
func replicasOf(obj runtime.Object) (replicaFields, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return replicaFields{}, fmt.Errorf("%T is not a struct", obj)
	}
	spec, status := v.Elem().FieldByName("Spec"), v.Elem().FieldByName("Status")
	if !spec.IsValid() || !status.IsValid() {
		return replicaFields{}, fmt.Errorf("%T has no Spec or no Status", obj)
	}
	f := replicaFields{specReplicas: spec.FieldByName("Replicas"), selector: spec.FieldByName("Selector"),
		statusReplicas: status.FieldByName("Replicas")}
	if f.specReplicas.Type() != reflect.TypeFor[*int32]() || f.selector.Type() != reflect.TypeFor[*metav1.LabelSelector]() ||
		f.statusReplicas.Type() != reflect.TypeFor[int32]() {
		return replicaFields{}, fmt.Errorf("%T needs Spec.Replicas *int32, Spec.Selector *metav1.LabelSelector and Status.Replicas int32", obj)
	}
	return f, nil
}

// scaleOf builds the Scale of a stored workload.
func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	f, err := replicasOf(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m, _ := meta.Accessor(obj)
	scale := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: scaleKind.GroupVersion().String(), Kind: scaleKind.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(f.statusReplicas.Int())},
	}
	if p := f.specReplicas.Interface().(*int32); p != nil {
		scale.Spec.Replicas = *p
	}
	if sel := f.selector.Interface().(*metav1.LabelSelector); sel != nil {
		if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
			scale.Status.Selector = s.String()
		}
	}
	return scale, nil
}

// serveScale answers GET, PUT and PATCH on {name}/scale.
func (s *Server) serveScale(w http.ResponseWriter, r *http.Request, req requestInfo) {
	enc, err := s.negotiate(r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.verb == verbGet {
		s.mu.Lock()
		obj, err := s.store.get(req.res, req.namespace, req.name)
		s.mu.Unlock()
		if err == nil {
			obj, err = scaleOf(obj)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeObject(w, r, enc, http.StatusOK, obj)
		return
	}
	change, err := s.scaleChange(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	stored, err := s.write(func(st *store) (runtime.Object, error) {
		obj, err := st.get(req.res, req.namespace, req.name)
		if err != nil {
			return nil, err
		}
		current, err := scaleOf(obj)
		if err != nil {
			return nil, err
		}
		owners, err := scaleOwners(req.res, obj, current)
		if err != nil {
			return nil, err
		}
		want, err := change(current)
		if err != nil {
			return nil, err
		}
		return s.setReplicas(st, req, obj, current, want, owners)
	})
	if err == nil {
		stored, err = scaleOf(stored)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, enc, http.StatusOK, stored)
}

// scaleChange decodes the body of a PUT (a Scale) or a PATCH (of a Scale)
// into a function from the current Scale to the wanted one.
func (s *Server) scaleChange(r *http.Request, req requestInfo) (func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error), error) {
	scaleRes := &resourceInfo{ServedResource: ServedResource{Resource: apiresource.Resource{Kind: scaleKind, ClusterScoped: req.res.ClusterScoped}}}
	scaleReq := req
	scaleReq.res = scaleRes
	if req.verb == verbUpdate {
		obj, err := s.decodeObject(r, scaleReq)
		if err != nil {
			return nil, err
		}
		return func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return obj.(*autoscalingv1.Scale), nil }, nil
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	mt := mediaTypeOf(r)
	apply, err := patch.Decode(mt, body, true, s.opts.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	return func(current *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		obj, err := s.applyPatch(scaleReq, current, apply)
		if err != nil {
			return nil, err
		}
		return obj.(*autoscalingv1.Scale), nil
	}, nil
}

// setReplicas writes a Scale's spec.replicas into the stored workload. A
// resourceVersion in the Scale is a precondition, as in any update. current
// is the Scale before the write, with the owners scaleOwners gave it.
func (s *Server) setReplicas(st *store, req requestInfo, stored runtime.Object, current, want *autoscalingv1.Scale,
	owners *managedfields.ScaleHandler) (runtime.Object, error) {
	if rv := want.ResourceVersion; rv != "" && rv != resourceVersionOf(stored) {
		return nil, conflict(req.res.groupResource(), req.name)
	}
	if want.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(scaleKind.GroupKind(), req.name, admission.InvalidReplicas(want.Spec.Replicas))
	}
	obj := stored.DeepCopyObject()
	f, err := replicasOf(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	replicas := want.Spec.Replicas
	f.specReplicas.Set(reflect.ValueOf(&replicas))
	if err := s.trackScale(st, req, obj, stored, current, want, owners); err != nil {
		return nil, err
	}
	return st.update(req.res, obj)
}

// The managedFields of a /scale write, as kube-apiserver records them: the
// workload's owners of spec.replicas are shown as owners of the Scale's
// spec.replicas; the Scale's field manager (subresource "scale") records
// the write on the Scale, taking spec.replicas from every other owner if
// the write changes it; and the result is translated back onto the
// workload (apimachinery's managedfields.ScaleHandler, the real server's
// own). So after "kubectl patch" of spec.replicas and then "kubectl scale",
// the replicas belong to kubectl's scale entry alone
// (TestScaleTakesReplicasFromOtherManagers).

// replicasPath is where a workload keeps the count a Scale shows.
var replicasPath = fieldpath.MakePathOrDie("spec", "replicas")

// scaleOwners gives scale, the Scale of the stored workload, the owners of
// the workload's spec.replicas, and returns the handler that translates
// the Scale's managedFields back.
func scaleOwners(ri *resourceInfo, workload runtime.Object, scale *autoscalingv1.Scale) (*managedfields.ScaleHandler, error) {
	m, err := meta.Accessor(workload)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	gv := ri.Kind.GroupVersion()
	owners := managedfields.NewScaleHandler(m.GetManagedFields(), gv,
		managedfields.ResourcePathMappings{gv.String(): replicasPath})
	entries, err := owners.ToSubresource()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	scale.ManagedFields = entries
	return owners, nil
}

// trackScale records a /scale write in the managedFields of obj, the new
// state of the stored workload, from current and want, the Scale before
// and after. Where the Scale's field manager cannot be built (a scheme
// without autoscaling/v1), the approximation of fakeapi/internal/apply records
// the write instead.
func (s *Server) trackScale(st *store, req requestInfo, obj, stored runtime.Object, current, want *autoscalingv1.Scale,
	owners *managedfields.ScaleHandler) error {
	fm, err := s.fieldManagerFor(req.res, "scale")
	if err != nil {
		return st.track(req, obj, stored)
	}
	out, err := fm.Update(current, want, req.fieldManager)
	if err != nil {
		return st.track(req, obj, stored)
	}
	om, err := meta.Accessor(out)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	entries, err := owners.ToParent(om.GetManagedFields())
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	// As on the real server, whose handler takes the times from the
	// workload's entries, the scale entry has no time.
	m.SetManagedFields(entries)
	return nil
}
