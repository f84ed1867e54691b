package fakeapi

import (
	"net/http"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The core kinds' field selectors and their errors are kube-apiserver's.
func TestCoreFieldSelectors(t *testing.T) {
	srv := startServer(t, Options{})
	om := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "ns", Name: name} }
	for _, obj := range []runtime.Object{
		&corev1.Service{ObjectMeta: om("lb"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}},
		&corev1.Service{ObjectMeta: om("plain"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
		&corev1.Secret{ObjectMeta: om("tls"), Type: corev1.SecretTypeTLS},
		&corev1.Secret{ObjectMeta: om("opaque"), Type: corev1.SecretTypeOpaque},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cordoned"}, Spec: corev1.NodeSpec{Unschedulable: true}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "open"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
	} {
		_, err := srv.Create(obj)
		require.NoError(t, err)
	}
	names := func(path string) []string {
		t.Helper()
		code, body, _ := do(t, http.MethodGet, srv.URL()+path, "", "")
		require.Equal(t, http.StatusOK, code, "%s", body)
		items, err := meta.ExtractList(decodeJSON(t, body))
		require.NoError(t, err)
		var out []string
		for _, it := range items {
			m, _ := meta.Accessor(it)
			out = append(out, m.GetName())
		}
		sort.Strings(out)
		return out
	}
	require.Equal(t, []string{"lb"}, names("/api/v1/namespaces/ns/services?fieldSelector=spec.type%3DLoadBalancer"))
	require.Equal(t, []string{"tls"}, names("/api/v1/namespaces/ns/secrets?fieldSelector=type%3Dkubernetes.io/tls"))
	require.Equal(t, []string{"cordoned"}, names("/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue"))
	require.Equal(t, []string{"team"}, names("/api/v1/namespaces?fieldSelector=status.phase%3DActive"))

	for path, msg := range map[string]string{
		"/api/v1/nodes?fieldSelector=metadata.namespace%3Dx":      "field label not supported: metadata.namespace",
		"/api/v1/namespaces/ns/configmaps?fieldSelector=data%3Dx": `"data" is not a known field selector: only "metadata.name", "metadata.namespace"`,
	} {
		code, body, _ := do(t, http.MethodGet, srv.URL()+path, "", "")
		require.Equal(t, http.StatusBadRequest, code, "%s", body)
		require.Equal(t, msg, decodeStatus(t, body).Message, path)
	}
}
