package fakeapi

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/crd"
)

// Custom resources come and go with their CustomResourceDefinitions:
// creating a CRD (over HTTP, as kubectl apply does, or with Server.Create
// of an unstructured object) makes the server serve its custom resource at
// once, in discovery and at its URLs, stored as unstructured objects
// (unstructured.go), with the status subresource and the
// additionalPrinterColumns of the CRD's storage version, and its schema in
// /openapi/v3. Deleting the CRD deletes its objects and stops serving and
// publishing them. fakeapi/internal/crd reads, checks and describes the definition;
// this file changes what the server serves.
//
// Not reproduced: validation, pruning and defaulting against the CRD's
// schema (objects are stored as sent), conversion between versions (only
// the storage version is served), the scale subresource of custom
// resources, and changes to a served CRD other than its deletion.

// crdResource is the resource that serves CRDs themselves.
func crdResource() *resourceInfo {
	return unstructuredResource(ServedResource{
		Resource:   apiresource.Resource{Kind: crd.Kind, Plural: "customresourcedefinitions", ClusterScoped: true},
		ShortNames: []string{"crd", "crds"}, StatusSubresource: true}, "CustomResourceDefinitionList")
}

// admitCRD checks a CRD sent over HTTP: the real rules, and that its
// resource does not collide with one already served.
func (s *Server) admitCRD(obj runtime.Object) error {
	v, err := crd.Read(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if errs := v.Validate(); len(errs) > 0 {
		return apierrors.NewInvalid(crd.Kind.GroupKind(), v.Metadata.Name, errs)
	}
	ri := definedResource(v)
	if _, taken := s.reg.byResource(ri.gvr); taken {
		return apierrors.NewInvalid(crd.Kind.GroupKind(), v.Metadata.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "names", "plural"), v.Spec.Names.Plural, "is already served")})
	}
	return nil
}

// syncCRDLocked serves, or stops serving, the resource of the CRD named
// name after a write to it. s.mu must be held.
func (s *Server) syncCRDLocked(name string) {
	crds, _ := s.reg.byKind(crd.Kind)
	current, served := s.crds[name]
	obj, err := s.store.get(crds, "", name)
	if err != nil { // deleted
		if served {
			s.stopServingLocked(current)
			delete(s.crds, name)
			delete(s.crdViews, name)
			s.publishCRDsLocked(current)
		}
		return
	}
	if served {
		return // already served; see the top of this file on changes
	}
	v, err := crd.Read(obj)
	if err != nil || len(v.Validate()) > 0 {
		return
	}
	ri := definedResource(v)
	if s.reg.add(ri) != nil {
		return
	}
	s.crds[name] = ri
	s.crdViews[name] = v
	s.publishCRDsLocked(ri)
	// The real server's controllers then mark the CRD accepted and
	// established, in a write of their own.
	established := obj.DeepCopyObject().(*unstructured.Unstructured)
	crd.SetStatus(established, metav1.NewTime(s.store.now()))
	// It cannot fail: the CRD is stored, valid, and at this very version.
	_, _ = s.store.update(crds, established)
}

// publishCRDsLocked rebuilds the OpenAPI v3 document of ri's group
// version from the CRDs served in it (none: the document goes).
func (s *Server) publishCRDsLocked(ri *resourceInfo) {
	path := "apis/" + ri.Kind.GroupVersion().String()
	defs := make([]crd.Definition, 0, len(s.crdViews))
	for _, v := range s.crdViews {
		defs = append(defs, v)
	}
	doc, ok, err := crd.OpenAPIDoc(path, defs)
	s.openapi.SetCRD(path, doc, ok && err == nil)
}

// stopServingLocked deletes every object of a custom resource (each with
// its DELETED event) and removes it from the registry.
func (s *Server) stopServingLocked(ri *resourceInfo) {
	b := s.store.bucket(ri)
	for _, key := range append([]string(nil), b.sortedKeys()...) {
		obj := b.objects[key]
		s.store.commit(ri, key, watch.Deleted, obj.DeepCopyObject(), obj)
	}
	s.reg.remove(ri)
	s.apply.Forget(ri.Kind)
}

// definedResource is the served resource of a definition.
func definedResource(v crd.Definition) *resourceInfo {
	d := v.Served()
	ri := unstructuredResource(ServedResource{
		Resource:          d.Resource,
		ShortNames:        d.ShortNames,
		Categories:        d.Categories,
		StatusSubresource: d.StatusSubresource,
	}, d.ListKind)
	ri.printerColumns = &d.Columns
	return ri
}
