package fakeapi

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/table"
)

// ServedResource describes one collection the server serves: where it
// lives (the embedded apiresource.Resource: kind, plural, scope, the same
// type the informer and its client name resources with) and what the
// server offers on it beyond the basic verbs. The kind's Go type must be
// registered in the server's scheme.
//
// A ServedResource is plain data; the server copies it at construction.
type ServedResource struct {
	apiresource.Resource
	// ShortNames are advertised in discovery (kubectl get po).
	ShortNames []string
	// Categories are advertised in discovery: kubectl get all lists the
	// resources in category "all".
	Categories []string
	// StatusSubresource serves {name}/status. As on a real server, a write
	// to the object then keeps the stored status and a write to /status
	// keeps the stored spec (the rest of the object is the client's, save
	// for the few fields the real status strategies protect). The Go type
	// needs a Status field.
	StatusSubresource bool
	// ScaleSubresource serves {name}/scale, an autoscaling/v1 Scale read
	// from and written to spec.replicas (kubectl scale). The Go type needs
	// Spec.Replicas (*int32), Spec.Selector (*metav1.LabelSelector) and
	// Status.Replicas (int32), as the apps/v1 workloads have.
	ScaleSubresource bool
	// SelectableFields returns the field-selector values of an object. Nil
	// means metadata.name and metadata.namespace only, as for most real
	// resources. It is also called with an empty object to learn which
	// field labels the resource supports.
	SelectableFields func(obj runtime.Object) fields.Set
}

// DefaultResources lists the built-in collections: core/v1 Pods, Services,
// ConfigMaps, Secrets, Namespaces, Nodes, Endpoints and Events, and apps/v1
// Deployments, ReplicaSets, StatefulSets and DaemonSets (the first three
// with their scale subresource), and coordination.k8s.io/v1 Leases, which
// package leaderelection elects leaders with, described one by one; then
// every other collection kube-apiserver serves by default (moreBuiltins).
// The server adds the second versions of two of them and the reviews
// (views.go, reviews.go), which are not ServedResources: they have no
// store of their own.
func DefaultResources() []ServedResource {
	return append(describedBuiltins(), moreBuiltins()...)
}

// describedBuiltins are the built-in collections with field selectors,
// short names and subresources of their own.
func describedBuiltins() []ServedResource {
	all := []string{"all"} // kubectl get all
	// The plural and the scope are apiresource.Guess's: the one list of
	// cluster-scoped kinds and the one plural mapping of the module.
	core := func(kind string, status bool, short ...string) ServedResource {
		return ServedResource{Resource: apiresource.Guess(corev1.SchemeGroupVersion.WithKind(kind)),
			StatusSubresource: status, ShortNames: short}
	}
	apps := func(kind string, scale bool, short ...string) ServedResource {
		return ServedResource{Resource: apiresource.Guess(appsv1.SchemeGroupVersion.WithKind(kind)),
			StatusSubresource: true, ScaleSubresource: scale, ShortNames: short, Categories: all}
	}
	pods := core("Pod", true, "po")
	pods.Categories = all
	pods.SelectableFields = podFields
	services := core("Service", true, "svc")
	services.SelectableFields = serviceFields
	services.Categories = all
	secrets := core("Secret", false)
	secrets.SelectableFields = secretFields
	namespaces := core("Namespace", true, "ns")
	namespaces.SelectableFields = namespaceFields
	nodes := core("Node", true, "no")
	nodes.SelectableFields = nodeFields
	events := core("Event", false, "ev")
	events.SelectableFields = eventFields
	return []ServedResource{
		pods,
		services,
		core("ConfigMap", false, "cm"),
		secrets,
		namespaces,
		nodes,
		core("Endpoints", false, "ep"),
		apps("Deployment", true, "deploy"),
		apps("ReplicaSet", true, "rs"),
		apps("StatefulSet", true, "sts"),
		apps("DaemonSet", false, "ds"),
		events,
		{Resource: apiresource.Guess(coordinationv1.SchemeGroupVersion.WithKind("Lease"))},
	}
}

// builtinGroups lists, by group version, the other kinds kube-apiserver
// v1.37 serves by default (the paths of its OpenAPI document, recorded in
// openapi/), each with its short names and whether it has a status
// subresource. Two kinds of collection are served apart, as they have no
// store of their own: events.k8s.io/v1 Events and autoscaling/v1
// HorizontalPodAutoscalers, second versions of the core/v1 Events and
// autoscaling/v2 HPAs listed here (builtinViews, views.go), and the
// create-only reviews (reviewResources, reviews.go).
var builtinGroups = []struct {
	gv    schema.GroupVersion
	kinds []builtinKind
}{
	{corev1.SchemeGroupVersion, []builtinKind{
		{"PersistentVolume", true, "pv"}, {"PersistentVolumeClaim", true, "pvc"},
		{"ServiceAccount", false, "sa"}, {"LimitRange", false, "limits"},
		{"ResourceQuota", true, "quota"}, {"PodTemplate", false, ""},
		{"ReplicationController", true, "rc"}, {"ComponentStatus", false, "cs"},
	}},
	{appsv1.SchemeGroupVersion, []builtinKind{{"ControllerRevision", false, ""}}},
	{admissionregistrationv1.SchemeGroupVersion, []builtinKind{
		{"MutatingWebhookConfiguration", false, ""}, {"ValidatingWebhookConfiguration", false, ""},
		{"ValidatingAdmissionPolicy", true, ""}, {"ValidatingAdmissionPolicyBinding", false, ""},
		{"MutatingAdmissionPolicy", false, ""}, {"MutatingAdmissionPolicyBinding", false, ""},
	}},
	{autoscalingv2.SchemeGroupVersion, []builtinKind{{"HorizontalPodAutoscaler", true, "hpa"}}},
	{batchv1.SchemeGroupVersion, []builtinKind{{"Job", true, ""}, {"CronJob", true, "cj"}}},
	{certificatesv1.SchemeGroupVersion, []builtinKind{
		{"CertificateSigningRequest", true, "csr"}, {"ClusterTrustBundle", false, ""}, {"PodCertificateRequest", true, ""},
	}},
	{discoveryv1.SchemeGroupVersion, []builtinKind{{"EndpointSlice", false, ""}}},
	{flowcontrolv1.SchemeGroupVersion, []builtinKind{{"FlowSchema", true, ""}, {"PriorityLevelConfiguration", true, ""}}},
	{networkingv1.SchemeGroupVersion, []builtinKind{
		{"Ingress", true, "ing"}, {"IngressClass", false, ""}, {"NetworkPolicy", false, "netpol"},
		{"IPAddress", false, "ip"}, {"ServiceCIDR", true, ""},
	}},
	{nodev1.SchemeGroupVersion, []builtinKind{{"RuntimeClass", false, ""}}},
	{policyv1.SchemeGroupVersion, []builtinKind{{"PodDisruptionBudget", true, "pdb"}}},
	{rbacv1.SchemeGroupVersion, []builtinKind{
		{"ClusterRole", false, ""}, {"ClusterRoleBinding", false, ""}, {"Role", false, ""}, {"RoleBinding", false, ""},
	}},
	{resourcev1.SchemeGroupVersion, []builtinKind{
		{"DeviceClass", false, ""}, {"DeviceTaintRule", true, ""}, {"ResourceClaim", true, ""},
		{"ResourceClaimTemplate", false, ""}, {"ResourceSlice", false, ""},
	}},
	{schedulingv1.SchemeGroupVersion, []builtinKind{{"PriorityClass", false, "pc"}}},
	{storagev1.SchemeGroupVersion, []builtinKind{
		{"CSIDriver", false, ""}, {"CSINode", true, ""}, {"CSIStorageCapacity", false, ""},
		{"StorageClass", false, "sc"}, {"VolumeAttachment", true, ""}, {"VolumeAttributesClass", false, "vac"},
	}},
	{storagemigrationv1.SchemeGroupVersion, []builtinKind{{"StorageVersionMigration", true, ""}}},
}

// builtinKind is one row of builtinGroups.
type builtinKind struct {
	kind      string
	status    bool   // serves {name}/status
	shortName string // "" for none
}

// moreBuiltins turns builtinGroups into ServedResources, with the plural
// and the scope of apiresource.Guess.
func moreBuiltins() []ServedResource {
	var out []ServedResource
	for _, g := range builtinGroups {
		for _, k := range g.kinds {
			r := ServedResource{Resource: apiresource.Guess(g.gv.WithKind(k.kind)), StatusSubresource: k.status}
			if k.shortName != "" {
				r.ShortNames = []string{k.shortName}
			}
			out = append(out, r)
		}
	}
	return out
}

// resourceInfo is a ServedResource resolved against the scheme: everything
// the handlers need, computed once.
type resourceInfo struct {
	ServedResource
	gvr      schema.GroupVersionResource
	listKind schema.GroupVersionKind
	// fieldLabels are the field-selector keys the resource accepts.
	fieldLabels map[string]bool
	// protobuf is true when the Go type can be encoded as protobuf.
	protobuf bool
	// generation is true when objects carry metadata.generation, which
	// counts changes to their spec (see tracksGeneration).
	generation bool
	// printerColumns, when set, are the resource's own Table columns.
	printerColumns *table.Columns
	// unstructured is true for custom resources, stored as
	// unstructured.Unstructured (unstructured.go, customresources.go).
	unstructured bool
	// view, when set, makes the resource a second version of a stored
	// one, with no objects of its own (views.go).
	view *view
	// review, when set, makes the resource a create-only review, answered
	// and never stored (reviews.go).
	review reviewFunc
}

// groupResource names the resource in error messages ("pods", "deployments.apps").
func (ri *resourceInfo) groupResource() schema.GroupResource { return ri.gvr.GroupResource() }

// fieldsOf returns the field-selector view of obj.
func (ri *resourceInfo) fieldsOf(obj runtime.Object) fields.Set {
	if ri.SelectableFields != nil {
		return ri.SelectableFields(obj)
	}
	return metadataFields(obj)
}

// registry is the set of served resources, indexed the two ways requests
// arrive: by URL (GVR) and by Go object (GVK). Custom resources come and go
// with their CustomResourceDefinitions (customresources.go); everything
// else is fixed at newRegistry. It is safe for concurrent use.
type registry struct {
	scheme *runtime.Scheme

	mu    sync.RWMutex // guards byGVR, byGVK and ordered
	byGVR map[schema.GroupVersionResource]*resourceInfo
	byGVK map[schema.GroupVersionKind]*resourceInfo
	// ordered keeps registration order, for stable discovery documents.
	ordered []*resourceInfo
}

func newRegistry(scheme *runtime.Scheme, resources []ServedResource) (*registry, error) {
	reg := &registry{
		scheme: scheme,
		byGVR:  map[schema.GroupVersionResource]*resourceInfo{},
		byGVK:  map[schema.GroupVersionKind]*resourceInfo{},
	}
	for _, r := range resources {
		ri, err := resolveResource(scheme, r)
		if err != nil {
			return nil, err
		}
		if err := reg.add(ri); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// add serves one more resource.
func (reg *registry) add(ri *resourceInfo) error {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if _, dup := reg.byGVR[ri.gvr]; dup {
		return fmt.Errorf("fakeapi: resource %s registered twice", ri.gvr)
	}
	if _, dup := reg.byGVK[ri.Kind]; dup {
		return fmt.Errorf("fakeapi: kind %s registered twice", ri.Kind)
	}
	reg.byGVR[ri.gvr] = ri
	reg.byGVK[ri.Kind] = ri
	reg.ordered = append(reg.ordered, ri)
	return nil
}

// remove stops serving a resource (a custom resource whose definition
// was deleted or changed).
func (reg *registry) remove(ri *resourceInfo) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.byGVR[ri.gvr] == ri {
		delete(reg.byGVR, ri.gvr)
	}
	if reg.byGVK[ri.Kind] == ri {
		delete(reg.byGVK, ri.Kind)
	}
	reg.ordered = slices.DeleteFunc(reg.ordered, func(o *resourceInfo) bool { return o == ri })
}

// byResource finds the resource a URL names.
func (reg *registry) byResource(gvr schema.GroupVersionResource) (*resourceInfo, bool) {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	ri, ok := reg.byGVR[gvr]
	return ri, ok
}

// byKind finds the resource that stores a kind.
func (reg *registry) byKind(gvk schema.GroupVersionKind) (*resourceInfo, bool) {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	ri, ok := reg.byGVK[gvk]
	return ri, ok
}

// all returns the served resources in registration order.
func (reg *registry) all() []*resourceInfo {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return slices.Clone(reg.ordered)
}

func resolveResource(scheme *runtime.Scheme, r ServedResource) (*resourceInfo, error) {
	if !scheme.Recognizes(r.Kind) {
		return nil, fmt.Errorf("fakeapi: kind %s is not registered in the scheme", r.Kind)
	}
	listKind := r.Kind.GroupVersion().WithKind(r.Kind.Kind + "List")
	if !scheme.Recognizes(listKind) {
		return nil, fmt.Errorf("fakeapi: list kind %s is not registered in the scheme", listKind)
	}
	ri := &resourceInfo{ServedResource: r, gvr: r.GVR(), listKind: listKind}
	sample, err := scheme.New(r.Kind)
	if err != nil {
		return nil, fmt.Errorf("fakeapi: %s: %w", r.Kind, err)
	}
	if _, err := meta.Accessor(sample); err != nil {
		return nil, fmt.Errorf("fakeapi: %s has no object metadata: %w", r.Kind, err)
	}
	if r.StatusSubresource && !reflect.ValueOf(sample).Elem().FieldByName("Status").IsValid() {
		return nil, fmt.Errorf("fakeapi: %s has no Status field for its status subresource", r.Kind)
	}
	if r.ScaleSubresource {
		if _, err := replicasOf(sample); err != nil {
			return nil, fmt.Errorf("fakeapi: %s cannot have a scale subresource: %w", r.Kind, err)
		}
	}
	ri.generation = tracksGeneration(r.Kind, sample)
	ri.fieldLabels = map[string]bool{}
	for k := range ri.fieldsOf(sample) {
		ri.fieldLabels[k] = true
	}
	_, ri.protobuf = sample.(protoMarshaler)
	return ri, nil
}

// protoMarshaler is what apimachinery's protobuf serializer needs from a type.
type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// forObject finds the resource that stores obj's Go type.
func (reg *registry) forObject(obj runtime.Object) (*resourceInfo, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if ri, ok := reg.byKind(u.GroupVersionKind()); ok {
			return ri, nil
		}
		return nil, fmt.Errorf("%w: %s", ErrNotServed, u.GroupVersionKind())
	}
	kinds, _, err := reg.scheme.ObjectKinds(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %T: %v", ErrNotServed, obj, err)
	}
	for _, gvk := range kinds {
		if ri, ok := reg.byKind(gvk); ok {
			return ri, nil
		}
	}
	return nil, fmt.Errorf("%w: %T", ErrNotServed, obj)
}

// servesGroup tells whether any served resource is in the group ("" is
// the core group, which is always there).
func (reg *registry) servesGroup(group string) bool {
	if group == "" {
		return true
	}
	for _, gv := range reg.groupVersions() {
		if gv.Group == group {
			return true
		}
	}
	return false
}

// groupVersions returns the served group/versions in a stable order.
func (reg *registry) groupVersions() []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, ri := range reg.all() {
		gv := ri.gvr.GroupVersion()
		if !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Group == "" && out[j].Group != "" })
	return out
}

// metadataFields is the field set every resource supports.
func metadataFields(obj runtime.Object) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fields.Set{}
	}
	return fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
}

// podFields adds the pod fields real clients select on: kubelets watch
// spec.nodeName, controllers filter on status.phase.
func podFields(obj runtime.Object) fields.Set {
	set := metadataFields(obj)
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return set
	}
	set["spec.nodeName"] = pod.Spec.NodeName
	set["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	set["spec.schedulerName"] = pod.Spec.SchedulerName
	set["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	set["spec.hostNetwork"] = strconv.FormatBool(pod.Spec.HostNetwork)
	set["status.phase"] = string(pod.Status.Phase)
	set["status.podIP"] = pod.Status.PodIP
	set["status.nominatedNodeName"] = pod.Status.NominatedNodeName
	return set
}

// The other core kinds with field selectors beyond metadata, with the
// real server's field lists. A cluster-scoped kind has no
// metadata.namespace field.

func serviceFields(obj runtime.Object) fields.Set {
	set := metadataFields(obj)
	if svc, ok := obj.(*corev1.Service); ok {
		set["spec.clusterIP"] = svc.Spec.ClusterIP
		set["spec.type"] = string(svc.Spec.Type)
	}
	return set
}

func secretFields(obj runtime.Object) fields.Set {
	set := metadataFields(obj)
	if secret, ok := obj.(*corev1.Secret); ok {
		set["type"] = string(secret.Type)
	}
	return set
}

func namespaceFields(obj runtime.Object) fields.Set {
	set := fields.Set{}
	if ns, ok := obj.(*corev1.Namespace); ok {
		set["metadata.name"] = ns.Name
		set["status.phase"] = string(ns.Status.Phase)
	}
	return set
}

func nodeFields(obj runtime.Object) fields.Set {
	set := fields.Set{}
	if node, ok := obj.(*corev1.Node); ok {
		set["metadata.name"] = node.Name
		set["spec.unschedulable"] = strconv.FormatBool(node.Spec.Unschedulable)
	}
	return set
}

// eventFields are the real server's field selectors of events, which
// kubectl describe uses to find an object's events.
func eventFields(obj runtime.Object) fields.Set {
	set := metadataFields(obj)
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return set
	}
	set["involvedObject.kind"] = ev.InvolvedObject.Kind
	set["involvedObject.namespace"] = ev.InvolvedObject.Namespace
	set["involvedObject.name"] = ev.InvolvedObject.Name
	set["involvedObject.uid"] = string(ev.InvolvedObject.UID)
	set["involvedObject.apiVersion"] = ev.InvolvedObject.APIVersion
	set["involvedObject.resourceVersion"] = ev.InvolvedObject.ResourceVersion
	set["involvedObject.fieldPath"] = ev.InvolvedObject.FieldPath
	set["reason"] = ev.Reason
	set["reportingComponent"] = ev.ReportingController
	// An Event written through events.k8s.io/v1 has no source: the real
	// server selects it by its reporting controller instead.
	set["source"] = ev.Source.Component
	if ev.Source.Component == "" {
		set["source"] = ev.ReportingController
	}
	set["type"] = ev.Type
	return set
}
