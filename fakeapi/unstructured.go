package fakeapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Custom resources have no Go type: their objects are stored as
// unstructured.Unstructured (a map of the JSON), as the real server stores
// them. The few places that need a typed object (decoding, lists, the
// status split, generation, server-side apply) ask resourceInfo.unstructured
// and use the helpers below.

// newObject returns an empty object of the resource's type.
func (s *Server) newObject(ri *resourceInfo) (runtime.Object, error) {
	if ri.unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(ri.Kind)
		return u, nil
	}
	obj, err := s.opts.Scheme.New(ri.Kind)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

// newList returns an empty list of the resource's list type.
func (s *Server) newList(ri *resourceInfo) (runtime.Object, error) {
	if ri.unstructured {
		list := &unstructured.UnstructuredList{Object: map[string]any{}}
		list.SetGroupVersionKind(ri.listKind)
		return list, nil
	}
	return s.opts.Scheme.New(ri.listKind)
}

// unstructuredResource resolves a custom resource: no scheme, every object
// has a generation, JSON only.
func unstructuredResource(r ServedResource, listKind string) *resourceInfo {
	ri := &resourceInfo{ServedResource: r, gvr: r.GVR(), unstructured: true, generation: true,
		listKind: r.Kind.GroupVersion().WithKind(listKind)}
	ri.fieldLabels = map[string]bool{"metadata.name": true, "metadata.namespace": true}
	return ri
}

// keepUnstructured is the status split of updateRules for a custom
// resource: a write to the object keeps the stored status; a write to
// /status keeps everything but the status (and the metadata).
func keepUnstructured(obj, stored *unstructured.Unstructured, subresource string) {
	if subresource != "status" {
		if status, ok := stored.Object["status"]; ok {
			obj.Object["status"] = runtime.DeepCopyJSONValue(status)
		} else {
			delete(obj.Object, "status")
		}
		return
	}
	for k, v := range stored.Object {
		if k != "status" && k != "metadata" {
			obj.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	for k := range obj.Object {
		if _, ok := stored.Object[k]; !ok && k != "status" && k != "metadata" {
			delete(obj.Object, k)
		}
	}
}

// unstructuredSpecChanged tells whether anything but metadata and status
// differs: what bumps a custom resource's generation.
func unstructuredSpecChanged(a, b *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		out := map[string]any{}
		for k, v := range u.Object {
			if k != "metadata" && k != "status" {
				out[k] = v
			}
		}
		return out
	}
	return !equality.Semantic.DeepEqual(strip(a), strip(b))
}

// decodeUnstructuredPatched decodes a patched JSON document as a custom
// resource.
func decodeUnstructuredPatched(ri *resourceInfo, patched []byte) (runtime.Object, error) {
	var doc map[string]any
	// utiljson keeps integers as int64, as the real server's unstructured
	// decoding does; encoding/json would make every number a float64.
	if err := utiljson.Unmarshal(patched, &doc); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched object is not valid JSON: %v", err))
	}
	u := &unstructured.Unstructured{Object: doc}
	if gvk := u.GroupVersionKind(); gvk != ri.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patch may not change the kind to %s", gvk))
	}
	return u, nil
}
