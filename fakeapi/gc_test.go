package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gcFixture is a server holding configmaps that own one another.
type gcFixture struct {
	t    *testing.T
	srv  *Server
	base string
}

func newGCFixture(t *testing.T) *gcFixture {
	srv := startServer(t, Options{})
	return &gcFixture{t: t, srv: srv, base: srv.URL() + "/api/v1/namespaces/default/configmaps"}
}

// create makes a configmap owned by owners (blocking their deletion) with
// the given finalizers, and returns its UID.
func (f *gcFixture) create(name string, finalizers []string, owners ...string) string {
	f.t.Helper()
	refs := ""
	for i, o := range owners {
		if i > 0 {
			refs += ","
		}
		refs += fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"blockOwnerDeletion":true}`, o, f.uid(o))
	}
	fin := ""
	for i, x := range finalizers {
		if i > 0 {
			fin += ","
		}
		fin += fmt.Sprintf("%q", x)
	}
	code, body, _ := do(f.t, http.MethodPost, f.base, mediaJSON,
		fmt.Sprintf(`{"metadata":{"name":%q,"ownerReferences":[%s],"finalizers":[%s]}}`, name, refs, fin))
	require.Equal(f.t, http.StatusCreated, code, "%s", body)
	return string(decodeJSON(f.t, body).(*corev1.ConfigMap).UID)
}

func (f *gcFixture) get(name string) *corev1.ConfigMap {
	f.t.Helper()
	code, body, _ := do(f.t, http.MethodGet, f.base+"/"+name, "", "")
	if code == http.StatusNotFound {
		return nil
	}
	require.Equal(f.t, http.StatusOK, code, "%s", body)
	return decodeJSON(f.t, body).(*corev1.ConfigMap)
}

func (f *gcFixture) uid(name string) string {
	f.t.Helper()
	cm := f.get(name)
	require.NotNil(f.t, cm, "%s exists", name)
	return string(cm.UID)
}

// delete deletes name with a propagation policy ("" for none).
func (f *gcFixture) delete(name, policy string) *corev1.ConfigMap {
	f.t.Helper()
	body := ""
	if policy != "" {
		body = fmt.Sprintf(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":%q}`, policy)
	}
	code, out, _ := do(f.t, http.MethodDelete, f.base+"/"+name, mediaJSON, body)
	require.Equal(f.t, http.StatusOK, code, "%s", out)
	return decodeJSON(f.t, out).(*corev1.ConfigMap)
}

// deletions lists the names of the configmaps deleted, in order.
func (f *gcFixture) deletions() []string {
	var names []string
	for _, w := range f.srv.Writes() {
		if cm, ok := w.Object.(*corev1.ConfigMap); ok && w.Type == "DELETED" {
			names = append(names, cm.Name)
		}
	}
	return names
}

func TestGarbageCollectionBackground(t *testing.T) {
	f := newGCFixture(t)
	f.create("owner", nil)
	f.create("other", nil)
	f.create("child", nil, "owner")
	f.create("grandchild", nil, "child")
	f.create("shared", nil, "owner", "other")

	f.delete("owner", "")

	require.Nil(t, f.get("child"), "a dependent goes with its owner")
	require.Nil(t, f.get("grandchild"), "and its own dependents after it")
	shared := f.get("shared")
	require.NotNil(t, shared, "a dependent with another owner stays")
	require.Len(t, shared.OwnerReferences, 1)
	require.Equal(t, "other", shared.OwnerReferences[0].Name, "losing only the reference to the gone owner")
	require.Equal(t, []string{"owner", "child", "grandchild"}, f.deletions(), "the owner first")
}

func TestGarbageCollectionAfterFinalizers(t *testing.T) {
	f := newGCFixture(t)
	f.create("owner", []string{"example.com/hold"})
	f.create("child", nil, "owner")

	f.delete("owner", "Background")
	require.NotNil(t, f.get("child"), "the owner is not gone yet")

	code, body, _ := do(t, http.MethodPatch, f.base+"/owner", mediaMerge, `{"metadata":{"finalizers":null}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Nil(t, f.get("child"), "collected once the owner's last finalizer went")
}

func TestGarbageCollectionForeground(t *testing.T) {
	f := newGCFixture(t)
	f.create("owner", nil)
	f.create("child", nil, "owner")
	f.create("held", []string{"example.com/hold"}, "owner")
	f.create("grandchild", nil, "child")

	owner := f.delete("owner", "Foreground")
	require.NotNil(t, owner.DeletionTimestamp, "the owner is marked")
	require.Contains(t, owner.Finalizers, "foregroundDeletion")

	require.Nil(t, f.get("child"), "dependents are deleted first")
	require.Nil(t, f.get("grandchild"))
	require.NotNil(t, f.get("held").DeletionTimestamp, "a dependent with a finalizer is only marked")
	require.NotNil(t, f.get("owner"), "and blocks its owner")

	code, body, _ := do(t, http.MethodPatch, f.base+"/held", mediaMerge, `{"metadata":{"finalizers":null}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Nil(t, f.get("owner"), "the owner goes after its last blocking dependent")
	require.Equal(t, []string{"grandchild", "child", "held", "owner"}, f.deletions())
}

func TestGarbageCollectionOrphan(t *testing.T) {
	f := newGCFixture(t)
	f.create("owner", nil)
	f.create("child", nil, "owner")

	owner := f.delete("owner", "Orphan")
	require.Contains(t, owner.Finalizers, "orphan", "the answer shows the owner marked")
	require.Nil(t, f.get("owner"), "then the collector lets it go")
	child := f.get("child")
	require.NotNil(t, child, "its dependent stays")
	require.Empty(t, child.OwnerReferences, "without the reference")
}

func TestGarbageCollectionBadPolicy(t *testing.T) {
	f := newGCFixture(t)
	f.create("owner", nil)
	code, body, _ := do(t, http.MethodDelete, f.base+"/owner", mediaJSON, `{"propagationPolicy":"Sideways"}`)
	require.Equal(t, http.StatusBadRequest, code, "%s", body)
	require.NotNil(t, f.get("owner"))
}

// A custom resource owns a configmap; a client deletes it with
// DeleteOptions in the resource's own group version, as client-go and
// this module's client do, which the real server accepts for every group.
func TestGarbageCollectionOfACustomResourcesDependents(t *testing.T) {
	f := newGCFixture(t)
	code, body, _ := do(t, http.MethodPost, f.srv.URL()+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", mediaJSON, widgetCRD)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	widgets := f.srv.URL() + "/apis/example.com/v1/namespaces/default/widgets"
	code, body, _ = do(t, http.MethodPost, widgets, mediaJSON, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	var w struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &w))
	code, body, _ = do(t, http.MethodPost, f.base, mediaJSON, fmt.Sprintf(
		`{"metadata":{"name":"child","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w1","uid":%q,"controller":true}]}}`, w.Metadata.UID))
	require.Equal(t, http.StatusCreated, code, "%s", body)

	code, body, _ = do(t, http.MethodDelete, widgets+"/w1", mediaJSON, `{"kind":"DeleteOptions","apiVersion":"example.com/v1","propagationPolicy":"Foreground"}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Nil(t, f.get("child"))
	code, _, _ = do(t, http.MethodGet, widgets+"/w1", "", "")
	require.Equal(t, http.StatusNotFound, code)
}

// Deleting a CRD deletes its objects, and the collector follows them in
// the same write.
func TestGarbageCollectionAfterACRDGoes(t *testing.T) {
	f := newGCFixture(t)
	crds := f.srv.URL() + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	code, body, _ := do(t, http.MethodPost, crds, mediaJSON, widgetCRD)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	code, body, _ = do(t, http.MethodPost, f.srv.URL()+"/apis/example.com/v1/namespaces/default/widgets", mediaJSON,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	var w struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &w))
	code, body, _ = do(t, http.MethodPost, f.base, mediaJSON, fmt.Sprintf(
		`{"metadata":{"name":"child","ownerReferences":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w1","uid":%q}]}}`, w.Metadata.UID))
	require.Equal(t, http.StatusCreated, code, "%s", body)

	code, body, _ = do(t, http.MethodDelete, crds+"/widgets.example.com", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Nil(t, f.get("child"), "collected with the widget its CRD took along")
}

// The Go API's Delete is followed by the collector as an HTTP DELETE is.
func TestGarbageCollectionAfterServerDelete(t *testing.T) {
	f := newGCFixture(t)
	f.create("owner", nil)
	f.create("child", nil, "owner")
	require.NoError(t, f.srv.Delete(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "owner"}}))
	require.Nil(t, f.get("child"))
}

// An object written with a reference to an owner this server deleted (a
// controller acting on a stale cache) is collected, as the real collector
// does once it finds the owner absent; a reference to a UID the server
// never issued is left alone, and an object with a live owner too only
// loses the dangling reference.
func TestGarbageCollectionOfLateDependents(t *testing.T) {
	f := newGCFixture(t)
	f.create("owner", nil)
	f.create("other", nil)
	goneUID := f.uid("owner")
	f.delete("owner", "")
	ref := func(name, uid string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q}`, name, uid)
	}
	post := func(name string, refs ...string) {
		t.Helper()
		code, body, _ := do(t, http.MethodPost, f.base, mediaJSON,
			fmt.Sprintf(`{"metadata":{"name":%q,"ownerReferences":[%s]}}`, name, strings.Join(refs, ",")))
		require.Equal(t, http.StatusCreated, code, "%s", body)
	}
	post("late", ref("owner", goneUID))
	require.Nil(t, f.get("late"), "its owner is gone")
	post("made-up", ref("owner", "made-up-uid"))
	require.NotNil(t, f.get("made-up"), "a UID the server never issued is not judged")
	post("half", ref("owner", goneUID), ref("other", f.uid("other")))
	half := f.get("half")
	require.NotNil(t, half, "it has a live owner")
	require.Len(t, half.OwnerReferences, 1)
	require.Equal(t, "other", half.OwnerReferences[0].Name)
}

// A cluster-scoped object cannot be owned by a namespaced one: Kubernetes'
// collector finds such a reference unresolvable and never deletes the
// dependent through it, neither when it is written nor when the named
// object goes, in the background or the foreground.
func TestGarbageCollectionKeepsAClusterScopedDependentOfANamespacedOwner(t *testing.T) {
	for _, policy := range []string{"", "Foreground"} {
		t.Run("policy "+policy, func(t *testing.T) {
			f := newGCFixture(t)
			f.create("owner", nil)
			nodes := f.srv.URL() + "/api/v1/nodes"
			code, body, _ := do(t, http.MethodPost, nodes, mediaJSON, fmt.Sprintf(
				`{"metadata":{"name":"n1","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":%q,"blockOwnerDeletion":true}]}}`,
				f.uid("owner")))
			require.Equal(t, http.StatusCreated, code, "%s", body)
			code, body, _ = do(t, http.MethodGet, nodes+"/n1", "", "")
			require.Equal(t, http.StatusOK, code, "kept when written: %s", body)

			f.delete("owner", policy)
			require.Nil(t, f.get("owner"), "the owner goes, not blocked by a reference that cannot resolve")
			code, body, _ = do(t, http.MethodGet, nodes+"/n1", "", "")
			require.Equal(t, http.StatusOK, code, "kept after the owner went: %s", body)
			node := decodeJSON(t, body).(*corev1.Node)
			require.Len(t, node.OwnerReferences, 1, "and its reference left as written")
		})
	}
}
