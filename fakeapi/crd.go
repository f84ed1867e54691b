package fakeapi

import (
	"encoding/json"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/table"
)

// CustomResourceDefinitions: creating a CRD (over HTTP, as kubectl apply
// does, or with Server.Create of an unstructured object) makes the server
// serve its custom resource at once, in discovery and at its URLs, stored
// as unstructured objects (unstructured.go), with the status subresource
// and the additionalPrinterColumns of the CRD's storage version, and its
// schema in /openapi/v3 (crd_openapi.go). Deleting the CRD deletes its
// objects and stops serving and publishing them. fakeapi reads the CRD
// with its own small view of the type below: the Go types live in
// k8s.io/apiextensions-apiserver, which this module does not depend on.
//
// Not reproduced: validation, pruning and defaulting against the CRD's
// schema (objects are stored as sent), conversion between versions (only
// the storage version is served), the scale subresource of custom
// resources, and changes to a served CRD other than its deletion.

var crdKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crdResource is the resource that serves CRDs themselves.
func crdResource() *resourceInfo {
	return unstructuredResource(ServedResource{
		Resource:   apiresource.Resource{Kind: crdKind, Plural: "customresourcedefinitions", ClusterScoped: true},
		ShortNames: []string{"crd", "crds"}, StatusSubresource: true}, "CustomResourceDefinitionList")
}

// crdView is the part of a CustomResourceDefinition fakeapi reads.
type crdView struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Plural     string   `json:"plural"`
			Singular   string   `json:"singular"`
			Kind       string   `json:"kind"`
			ListKind   string   `json:"listKind"`
			ShortNames []string `json:"shortNames"`
			Categories []string `json:"categories"`
		} `json:"names"`
		Scope    string       `json:"scope"`
		Versions []crdVersion `json:"versions"`
	} `json:"spec"`
}

type crdVersion struct {
	Name         string `json:"name"`
	Served       bool   `json:"served"`
	Storage      bool   `json:"storage"`
	Subresources struct {
		Status *struct{} `json:"status"`
	} `json:"subresources"`
	Columns []table.PrinterColumn `json:"additionalPrinterColumns"`
	Schema  struct {
		OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
	} `json:"schema"`
}

func readCRD(obj runtime.Object) (crdView, error) {
	var v crdView
	data, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(data, &v)
	}
	return v, err
}

// storageVersion is the version fakeapi serves.
func (v crdView) storageVersion() (crdVersion, bool) {
	for _, ver := range v.Spec.Versions {
		if ver.Storage && ver.Served {
			return ver, true
		}
	}
	return crdVersion{}, false
}

// validate applies the real server's rules that clients meet first.
func (v crdView) validate() field.ErrorList {
	var errs field.ErrorList
	names, spec := v.Spec.Names, field.NewPath("spec")
	if v.Spec.Group == "" || !strings.Contains(v.Spec.Group, ".") {
		errs = append(errs, field.Invalid(spec.Child("group"), v.Spec.Group, "should be a domain with at least one dot"))
	}
	if names.Plural == "" {
		errs = append(errs, field.Required(spec.Child("names", "plural"), ""))
	}
	if names.Kind == "" {
		errs = append(errs, field.Required(spec.Child("names", "kind"), ""))
	}
	if want := names.Plural + "." + v.Spec.Group; v.Metadata.Name != want {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), v.Metadata.Name,
			`must be spec.names.plural+"."+spec.group`))
	}
	if v.Spec.Scope != "Namespaced" && v.Spec.Scope != "Cluster" {
		errs = append(errs, field.NotSupported(spec.Child("scope"), v.Spec.Scope, []string{"Cluster", "Namespaced"}))
	}
	if _, ok := v.storageVersion(); !ok {
		errs = append(errs, field.Invalid(spec.Child("versions"), len(v.Spec.Versions), "must have exactly one version marked as storage version"))
	}
	return errs
}

// resource is the custom resource the CRD defines.
func (v crdView) resource() *resourceInfo {
	ver, _ := v.storageVersion()
	names := v.Spec.Names
	listKind := names.ListKind
	if listKind == "" {
		listKind = names.Kind + "List"
	}
	ri := unstructuredResource(ServedResource{
		Resource: apiresource.Resource{
			Kind:   schema.GroupVersionKind{Group: v.Spec.Group, Version: ver.Name, Kind: names.Kind},
			Plural: names.Plural, ClusterScoped: v.Spec.Scope != "Namespaced",
		},
		ShortNames: names.ShortNames,
		Categories: names.Categories, StatusSubresource: ver.Subresources.Status != nil,
	}, listKind)
	columns := table.PrinterColumns(ver.Columns)
	ri.printerColumns = &columns
	return ri
}

// setCRDStatus marks a new CRD accepted and established, as the real
// server's controllers do moments after the create (kubectl wait
// --for=condition=Established waits for it).
func setCRDStatus(u *unstructured.Unstructured, now metav1.Time) {
	v, err := readCRD(u)
	if err != nil {
		return
	}
	at := now.UTC().Format("2006-01-02T15:04:05Z")
	condition := func(typ, reason, message string) any {
		return map[string]any{"type": typ, "status": "True", "reason": reason, "message": message, "lastTransitionTime": at}
	}
	names := map[string]any{"plural": v.Spec.Names.Plural, "singular": v.Spec.Names.Singular, "kind": v.Spec.Names.Kind,
		"listKind": v.Spec.Names.ListKind}
	if names["listKind"] == "" {
		names["listKind"] = v.Spec.Names.Kind + "List"
	}
	var stored []any
	for _, ver := range v.Spec.Versions {
		if ver.Storage {
			stored = append(stored, ver.Name)
		}
	}
	u.Object["status"] = map[string]any{
		"acceptedNames": names,
		"conditions": []any{
			condition("NamesAccepted", "NoConflicts", "no conflicts found"),
			condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
		},
		"storedVersions": stored,
	}
}

// admitCRD checks a CRD sent over HTTP: the real rules, and that its
// resource does not collide with one already served.
func (s *Server) admitCRD(obj runtime.Object) error {
	v, err := readCRD(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if errs := v.validate(); len(errs) > 0 {
		return apierrors.NewInvalid(crdKind.GroupKind(), v.Metadata.Name, errs)
	}
	ri := v.resource()
	if _, taken := s.reg.byResource(ri.gvr); taken {
		return apierrors.NewInvalid(crdKind.GroupKind(), v.Metadata.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "names", "plural"), v.Spec.Names.Plural, "is already served")})
	}
	return nil
}

// syncCRDLocked serves, or stops serving, the resource of the CRD named
// name after a write to it. s.mu must be held.
func (s *Server) syncCRDLocked(name string) {
	crds, _ := s.reg.byKind(crdKind)
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
		return // already served; see the package comment on changes
	}
	v, err := readCRD(obj)
	if err != nil || len(v.validate()) > 0 {
		return
	}
	ri := v.resource()
	if s.reg.add(ri) != nil {
		return
	}
	s.crds[name] = ri
	s.crdViews[name] = v
	s.publishCRDsLocked(ri)
	// The real server's controllers then mark the CRD accepted and
	// established, in a write of their own.
	established := obj.DeepCopyObject().(*unstructured.Unstructured)
	setCRDStatus(established, metav1.NewTime(s.store.now()))
	// It cannot fail: the CRD is stored, valid, and at this very version.
	_, _ = s.store.update(crds, established)
}

// publishCRDsLocked rebuilds the OpenAPI v3 document of ri's group
// version from the CRDs served in it (none: the document goes).
func (s *Server) publishCRDsLocked(ri *resourceInfo) {
	path := "apis/" + ri.Kind.GroupVersion().String()
	views := make([]crdView, 0, len(s.crdViews))
	for _, v := range s.crdViews {
		views = append(views, v)
	}
	doc, ok, err := crdOpenAPIDoc(path, views)
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
	s.apply.forget(ri)
}
