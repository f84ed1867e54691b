package fakeapi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/fakeapi/internal/admission"
	"github.com/seed31a95821/informer/fakeapi/internal/crd"
)

// What a real server does to an object sent over HTTP between decoding it
// and storing it, in the order it does it:
//
//  1. Defaulting, as the decoder applies it on every write (a pod gets its
//     restartPolicy, a container its imagePullPolicy; admission.Default).
//     Fields defaulted here belong to the writer in managedFields, as on
//     the real server.
//  2. Admission: the namespace must exist (NamespaceLifecycle), and a pod
//     gets the tolerations and priority the default admission plugins add.
//  3. The strategy's create or update rules: a new pod's status is reset to
//     Pending with its QoS class; a pod update keeps the stored status.
//  4. Validation of the spec (admission.Validate, admission.AdmitUpdate):
//     422 Invalid with the field causes of the real server.
//
// fakeapi/internal/admission holds the rules of steps 1 to 4 that need nothing but
// the object; this file holds the ones that need the store (the namespace
// must exist, a Service's cluster IP is allocated) and calls the others.
//
// Writes through the Go API (Server.Create, Update) skip all of it: they
// come from no client, and tests may store the smallest objects that make
// their point (a pod without containers, already Running).

// systemNamespaces exist on every real server from its start. fakeapi
// creates each the first time an HTTP write needs it, so that a fresh
// server's history starts empty.
var systemNamespaces = map[string]bool{
	metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true,
	corev1.NamespaceNodeLease: true,
}

var namespaceKind = corev1.SchemeGroupVersion.WithKind("Namespace")

// admitCreate prepares a defaulted object sent by a client for creation:
// the namespace check, the create rules and validation.
func (s *Server) admitCreate(st *store, req requestInfo, obj runtime.Object) error {
	if !req.res.ClusterScoped {
		if err := s.requireNamespace(st, req.namespace); err != nil {
			return err
		}
	}
	if req.res.Kind == crd.Kind {
		if err := s.admitCRD(obj); err != nil {
			return err
		}
	}
	admission.PrepareForCreate(obj)
	if svc, ok := obj.(*corev1.Service); ok {
		st.allocateClusterIP(svc)
	}
	return admission.Validate(req.res.Kind.GroupKind(), obj)
}

// allocateClusterIP gives a new Service its virtual IP, as the real
// server's allocator does, from 10.0.0.0/16 (the address of a Service
// created over HTTP is always set; headless and ExternalName services get
// none). Addresses are handed out in order and never reused, so runs are
// reproducible.
func (st *store) allocateClusterIP(svc *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return
	}
	if svc.Spec.ClusterIP == "" {
		st.serviceIPs++
		n := st.serviceIPs + 1 // 10.0.0.1 is the kubernetes service's on a real cluster
		svc.Spec.ClusterIP = fmt.Sprintf("10.0.%d.%d", (n>>8)&0xff, n&0xff)
	}
	svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	admission.DefaultIPFamilies(svc)
}

// requireNamespace answers the real server's 404 for a write into a
// namespace that does not exist, creating a system namespace on first use.
// A namespace that is being deleted refuses new objects with 403, as the
// real NamespaceLifecycle admission does.
func (s *Server) requireNamespace(st *store, name string) error {
	ri, ok := s.reg.byKind(namespaceKind)
	if !ok {
		return nil // a scheme without namespaces: nothing to check against
	}
	obj, err := st.get(ri, "", name)
	if err == nil {
		if m, _ := meta.Accessor(obj); m != nil && m.GetDeletionTimestamp() != nil {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, name,
				fmt.Errorf("unable to create new content in namespace %s because it is being terminated", name))
		}
		return nil
	}
	if !systemNamespaces[name] {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
	}
	_, err = st.create(ri, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return err
}

// deleteNamespace plays the namespace controller's part at once, as
// poddelete.go plays the kubelet's: every object in the namespace is
// deleted (each with its own event), then the namespace itself.
func (st *store) deleteNamespace(reg *registry, ri *resourceInfo, name string, pre preconditions) (runtime.Object, error) {
	old, err := st.get(ri, "", name)
	if err != nil {
		return nil, err
	}
	oldMeta, _ := meta.Accessor(old)
	if err := pre.check(ri, oldMeta); err != nil {
		return nil, err
	}
	for _, content := range reg.all() {
		if content.ClusterScoped || !content.stores() {
			continue
		}
		b := st.bucket(content)
		for _, key := range append([]string(nil), b.sortedKeys()...) {
			if obj := b.objects[key]; objectNamespace(obj) == name {
				st.commit(content, key, watch.Deleted, obj.DeepCopyObject(), obj)
			}
		}
	}
	return st.delete(ri, "", name, preconditions{})
}

func objectNamespace(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetNamespace()
	}
	return ""
}
