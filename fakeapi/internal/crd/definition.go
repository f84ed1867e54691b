package crd

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/table"
)

// Kind is the kind of a CustomResourceDefinition.
var Kind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// Definition is the part of a CustomResourceDefinition fakeapi reads: the
// Go types live in k8s.io/apiextensions-apiserver, which this module does
// not depend on.
type Definition struct {
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
		Scope    string    `json:"scope"`
		Versions []Version `json:"versions"`
	} `json:"spec"`
}

// Version is one of a definition's versions.
type Version struct {
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

// Read reads the definition from obj (any object that marshals to the
// JSON of a CustomResourceDefinition, such as an
// *unstructured.Unstructured).
func Read(obj runtime.Object) (Definition, error) {
	var v Definition
	data, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(data, &v)
	}
	return v, err
}

// StorageVersion is the version fakeapi serves: the one marked served and
// storage. ok is false when there is none.
func (v Definition) StorageVersion() (ver Version, ok bool) {
	for _, ver := range v.Spec.Versions {
		if ver.Storage && ver.Served {
			return ver, true
		}
	}
	return Version{}, false
}

// Validate applies the real server's rules that clients meet first: a
// group with a dot, a plural and a kind, the name plural.group, a known
// scope, one storage version.
func (v Definition) Validate() field.ErrorList {
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
	if _, ok := v.StorageVersion(); !ok {
		errs = append(errs, field.Invalid(spec.Child("versions"), len(v.Spec.Versions), "must have exactly one version marked as storage version"))
	}
	return errs
}

// Served is what a definition asks the server to serve: the custom
// resource of its storage version.
type Served struct {
	Resource   apiresource.Resource
	ListKind   string
	ShortNames []string
	Categories []string
	// StatusSubresource is true when the version has the status
	// subresource.
	StatusSubresource bool
	// Columns are the version's additionalPrinterColumns, for Tables.
	Columns table.Columns
}

// Served is the custom resource the definition defines, in its storage
// version. Call it on a definition that passed Validate.
func (v Definition) Served() Served {
	ver, _ := v.StorageVersion()
	names := v.Spec.Names
	listKind := names.ListKind
	if listKind == "" {
		listKind = names.Kind + "List"
	}
	return Served{
		Resource: apiresource.Resource{
			Kind:   schema.GroupVersionKind{Group: v.Spec.Group, Version: ver.Name, Kind: names.Kind},
			Plural: names.Plural, ClusterScoped: v.Spec.Scope != "Namespaced",
		},
		ListKind:          listKind,
		ShortNames:        names.ShortNames,
		Categories:        names.Categories,
		StatusSubresource: ver.Subresources.Status != nil,
		Columns:           table.PrinterColumns(ver.Columns),
	}
}

// SetStatus marks a new CRD accepted and established, as the real
// server's controllers do moments after the create (kubectl wait
// --for=condition=Established waits for it). u is left alone when it is
// not a readable definition.
func SetStatus(u *unstructured.Unstructured, now metav1.Time) {
	v, err := Read(u)
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
