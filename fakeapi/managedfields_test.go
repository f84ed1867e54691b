package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HTTP writes are recorded in managedFields as kube-apiserver records them:
// one Update entry per manager, the manager named after the User-Agent or
// the fieldManager parameter, and a no-op update stays a no-op.
func TestManagedFieldsRecordHTTPWrites(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	srv := startServer(t, Options{Now: func() time.Time { return now }})
	createNamespace(t, srv, "ns")
	url := podsURL(srv)
	write := func(method, url string, p *corev1.Pod, header ...string) *corev1.Pod {
		t.Helper()
		code, body, _ := do(t, method, url, "application/json", jsonBody(t, p), header...)
		require.Less(t, code, 300, "%s", body)
		return decodeJSON(t, body).(*corev1.Pod)
	}

	created := write(http.MethodPost, url, validPod("ns", "a", map[string]string{"app": "web"}),
		"User-Agent", "kubectl/v1.37.2 (linux/amd64) kubernetes/abc")
	require.Len(t, created.ManagedFields, 1)
	e := created.ManagedFields[0]
	require.Equal(t, "kubectl", e.Manager, "the User-Agent's product names the manager")
	require.Equal(t, metav1.ManagedFieldsOperationUpdate, e.Operation, "a create is filed as an Update")
	require.Equal(t, "v1", e.APIVersion)
	require.Equal(t, "FieldsV1", e.FieldsType)
	require.Equal(t, now.Truncate(time.Second), e.Time.Time.UTC())
	// The defaults belong to the writer, and list items are owned by key,
	// as on the real server.
	require.JSONEq(t, `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{`+
		`".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},`+
		`"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},`+
		`"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`, string(e.FieldsV1.Raw))

	// Another manager changes one label: it owns that label only.
	changed := created.DeepCopy()
	changed.Labels["tier"] = "front"
	updated := write(http.MethodPut, url+"/a?fieldManager=labeller", changed)
	require.Len(t, updated.ManagedFields, 2)
	require.Equal(t, "labeller", updated.ManagedFields[1].Manager)
	require.JSONEq(t, `{"f:metadata":{"f:labels":{"f:tier":{}}}}`, string(updated.ManagedFields[1].FieldsV1.Raw))

	// Writing back what was read changes nothing: no new RV, no new entry.
	again := write(http.MethodPut, url+"/a?fieldManager=labeller", updated)
	require.Equal(t, updated.ResourceVersion, again.ResourceVersion)
	require.Equal(t, updated.ManagedFields, again.ManagedFields)

	// A client that omits managedFields does not erase them.
	blind := updated.DeepCopy()
	blind.ManagedFields = nil
	blind.Annotations = map[string]string{"note": "x"}
	kept := write(http.MethodPut, url+"/a", blind, "User-Agent", "kubectl/v1.37.2")
	require.Len(t, kept.ManagedFields, 2, "kubectl's entry absorbs the annotation")
	require.Equal(t, "kubectl", kept.ManagedFields[1].Manager, "the latest write comes last, as entries are ordered by time")
	var fields map[string]any
	require.NoError(t, json.Unmarshal(kept.ManagedFields[1].FieldsV1.Raw, &fields))
	require.Contains(t, fields["f:metadata"], "f:annotations")
	require.Contains(t, fields["f:metadata"], "f:labels", "and keeps what it owned")

	// The Go API is no client: nothing is recorded.
	direct, err := srv.Create(pod("ns", "b", nil))
	require.NoError(t, err)
	require.Empty(t, direct.(*corev1.Pod).ManagedFields)
}
