package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/seed31a95821/informer/fakeapi/internal/admission"
	"github.com/seed31a95821/informer/fakeapi/internal/convert"
	"github.com/seed31a95821/informer/fakeapi/internal/openapi"
	"github.com/seed31a95821/informer/fakeapi/internal/patch"
)

// Target is what a field manager is built for: a served resource, as the
// server describes it.
type Target struct {
	Kind schema.GroupVersionKind
	// StatusSubresource is true when the resource has /status, whose
	// fields an apply to the object never takes, and the other way round.
	StatusSubresource bool
	// Unstructured is true for custom resources, stored as
	// *unstructured.Unstructured.
	Unstructured bool
}

// Managers are one server's field managers, one per resource and
// subresource, built on first use, and the deduced converter for types
// the recorded schemas do not describe (the typed converter is shared by
// the process: sharedTypeConverter). It is safe for concurrent use.
type Managers struct {
	scheme *runtime.Scheme
	// recorded tells whether the recorded OpenAPI documents describe a
	// kind (the built-in kinds do); other kinds get a schema deduced from
	// their objects.
	recorded func(schema.GroupVersionKind) bool

	mu       sync.Mutex // guards deduced and managers
	deduced  managedfields.TypeConverter
	managers map[managerKey]*managedfields.FieldManager
}

// NewManagers makes the field managers of a server with this scheme.
// recorded tells which kinds the recorded OpenAPI documents describe: the
// server's built-in kinds, not a custom Go type a test registers.
func NewManagers(scheme *runtime.Scheme, recorded func(schema.GroupVersionKind) bool) *Managers {
	return &Managers{scheme: scheme, recorded: recorded, managers: map[managerKey]*managedfields.FieldManager{}}
}

// managerKey names a field manager: one per resource and subresource.
type managerKey struct {
	target      Target
	subresource string
}

// Forget drops the field managers of a kind that is no longer served, so
// that creating and deleting CRDs does not grow the cache without bound.
func (at *Managers) Forget(kind schema.GroupVersionKind) {
	at.mu.Lock()
	defer at.mu.Unlock()
	for k := range at.managers {
		if k.target.Kind == kind {
			delete(at.managers, k)
		}
	}
}

// For returns the field manager of a resource or one of its subresources
// ("status", "scale": the manager of a /scale write tracks the Scale),
// building it once. Its errors are *apierrors.StatusError (500).
func (at *Managers) For(t Target, subresource string) (*managedfields.FieldManager, error) {
	typed, described, err := sharedTypeConverter()
	if err != nil {
		return nil, err
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	key := managerKey{t, subresource}
	if fm := at.managers[key]; fm != nil {
		return fm, nil
	}
	// One type converter must describe both versions of a resource
	// served through two (convert.Pairs): the field manager converts the
	// object between them. The recorded documents describe core/v1
	// Events but not events.k8s.io/v1, so both Events use the deduced one.
	converter := typed
	if converter == nil || !at.describes(described, t.Kind) {
		if at.deduced == nil {
			at.deduced = managedfields.NewDeducedTypeConverter()
		}
		converter = at.deduced
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if t.StatusSubresource {
		// As the real strategies do: applying to the object never takes
		// ownership of its status, which is written through /status, and
		// applying to /status never takes the spec.
		other := "status"
		if subresource == "status" {
			other = "spec"
		}
		reset = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(t.Kind.GroupVersion().String()): fieldpath.NewExcludeSetFilter(
				fieldpath.NewSet(fieldpath.MakePathOrDie(other))),
		}
	}
	var fm *managedfields.FieldManager
	switch {
	case subresource == "scale":
		// The field manager of a /scale write tracks the Scale, whose
		// owners the server translates to and from the workload's.
		fm, err = managedfields.NewDefaultFieldManager(typed, at.scheme, applyDefaulter{}, at.scheme,
			scaleKind, scaleKind.GroupVersion(), subresource, nil)
	case t.Unstructured:
		fm, err = managedfields.NewDefaultCRDFieldManager(converter, unstructuredConverter{}, applyDefaulter{}, unstructuredCreater{},
			t.Kind, t.Kind.GroupVersion(), subresource, nil)
	default:
		fm, err = managedfields.NewDefaultFieldManager(converter, viewConvertor{at.scheme}, applyDefaulter{}, at.scheme,
			t.Kind, t.Kind.GroupVersion(), subresource, reset)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	at.managers[key] = fm
	return fm, nil
}

// describes tells whether the recorded schemas describe kind, and the
// other version of it if it has one.
func (at *Managers) describes(described map[schema.GroupVersion]bool, kind schema.GroupVersionKind) bool {
	ok := func(k schema.GroupVersionKind) bool { return at.recorded(k) && described[k.GroupVersion()] }
	other, paired := convert.Other(kind)
	return ok(kind) && (!paired || ok(other))
}

// applyDefaulter applies fakeapi's defaults (admission.Default) where the
// field manager defaults an applied object, so that applying what is
// already defaulted is a no-op.
type applyDefaulter struct{}

func (applyDefaulter) Default(obj runtime.Object) { admission.Default(obj) }

// builtinTypes is the type converter of the built-in kinds, built on first
// use from the embedded OpenAPI v3 documents. It is a pure function of
// those constant documents, immutable and safe for concurrent use, so every
// Server in the process shares it: building it takes tens of milliseconds
// (docs/perf-log.md), which a test suite that starts hundreds of servers
// should pay once, not once per server.
var builtinTypes struct {
	once      sync.Once
	converter managedfields.TypeConverter
	described map[schema.GroupVersion]bool
	err       error
}

// sharedTypeConverter returns the shared converter of the built-in kinds
// and the group versions it describes: only those whose OpenAPI v3
// documents are recorded (core v1, apps/v1, apiextensions.k8s.io/v1).
// A built-in kind of another group version (a Lease, a Job) gets the
// deduced converter, as a custom type does: it knows no list keys, so
// it owns a list whole, but apply works.
func sharedTypeConverter() (managedfields.TypeConverter, map[schema.GroupVersion]bool, error) {
	builtinTypes.once.Do(func() {
		builtinTypes.converter, builtinTypes.described, builtinTypes.err = loadTypeConverter()
	})
	return builtinTypes.converter, builtinTypes.described, builtinTypes.err
}

// loadTypeConverter reads the schemas of every recorded group version.
func loadTypeConverter() (managedfields.TypeConverter, map[schema.GroupVersion]bool, error) {
	paths, err := openapi.RecordedV3Paths()
	if err != nil {
		return nil, nil, err
	}
	models := map[string]*spec.Schema{}
	described := map[schema.GroupVersion]bool{}
	for _, path := range paths {
		described[groupVersionOfPath(path)] = true
		doc, err := openapi.RecordedV3(path)
		if err != nil {
			return nil, nil, err
		}
		var parsed struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(doc.Data, &parsed); err != nil {
			return nil, nil, fmt.Errorf("fakeapi: reading the OpenAPI schemas of %s: %w", path, err)
		}
		for name, schema := range parsed.Components.Schemas {
			models[name] = schema
		}
	}
	converter, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, nil, fmt.Errorf("fakeapi: building the apply schemas: %w", err)
	}
	return converter, described, nil
}

// groupVersionOfPath reads a recorded document's path: "api/v1" is the
// core group's v1, "apis/apps/v1" the apps group's.
func groupVersionOfPath(path string) schema.GroupVersion {
	parts := strings.Split(path, "/")
	if len(parts) == 2 {
		return schema.GroupVersion{Version: parts[1]}
	}
	return schema.GroupVersion{Group: parts[len(parts)-2], Version: parts[len(parts)-1]}
}

// StampTimes sets the time of every managedFields entry this write (obj
// over live) changed from the server's clock, which the field manager
// does not know of; the entries it left alone keep theirs.
func StampTimes(obj, live runtime.Object, now time.Time) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	var before []metav1.ManagedFieldsEntry
	if lm, err := meta.Accessor(live); err == nil {
		before = lm.GetManagedFields()
	}
	entries := m.GetManagedFields()
	for i := range entries {
		unchanged := slices.ContainsFunc(before, func(b metav1.ManagedFieldsEntry) bool {
			return sameEntry(b, entries[i])
		})
		if !unchanged {
			entries[i].Time = &metav1.Time{Time: now.Truncate(time.Second)}
		}
	}
	m.SetManagedFields(entries)
}

// sameEntry compares two entries but for their time.
func sameEntry(a, b metav1.ManagedFieldsEntry) bool {
	a.Time, b.Time = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

// Error keeps the field manager's API errors (409 Conflict with one
// cause per conflicting field) and answers the others as kube-apiserver
// does: its field manager returns them as plain Go errors, which its
// handler sends as a 500 whose message is the error's text, with no reason
// and no details. The commonest is an apply patch with a field the type
// does not declare ("failed to create typed patch object (ns/d; apps/v1,
// Kind=Deployment): .spec.bogus: field not declared in schema"): a 500, not
// a 4xx, whatever fieldValidation says (fakeapi's TestApplyUndeclaredField;
// docs/fakeapi.md).
func Error(err error) error {
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}}
}

// DecodePatch decodes the body of an apply patch: YAML or JSON, a whole
// object of kind, without managedFields. Its errors are 400 BadRequest.
func DecodePatch(body []byte, kind schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	data, err := yaml.YAMLToJSON(body)
	if err == nil {
		err = patch.CheckDepth(data)
	}
	var doc map[string]any
	if err == nil {
		err = utiljson.Unmarshal(data, &doc) // integers stay int64, as on the real server
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	patchObj := &unstructured.Unstructured{Object: doc}
	if gvk := patchObj.GroupVersionKind(); gvk != kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the apply patch is a %s, not a %s", gvk, kind))
	}
	if patchObj.GetManagedFields() != nil {
		return nil, apierrors.NewBadRequest("metadata.managedFields must be nil")
	}
	return patchObj, nil
}

// scaleKind is the kind of the /scale subresource.
var scaleKind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// unstructuredConverter is the object converter server-side apply needs
// for custom resources: they are served in one version and stay
// unstructured, so converting is the identity.
type unstructuredConverter struct{}

func (unstructuredConverter) Convert(in, out, _ any) error {
	u, ok := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return fmt.Errorf("fakeapi/internal/apply: cannot convert %T to %T", in, out)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (unstructuredConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	if gvk, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{in.GetObjectKind().GroupVersionKind()}); !ok ||
		gvk != in.GetObjectKind().GroupVersionKind() {
		return nil, fmt.Errorf("fakeapi/internal/apply: custom resources are served in one version, not %v", gv)
	}
	return in, nil
}

func (unstructuredConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// unstructuredCreater makes the empty objects apply starts from.
type unstructuredCreater struct{}

func (unstructuredCreater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(kind)
	return u, nil
}
