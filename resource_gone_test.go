package informer_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
)

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced",
 "names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
 "versions":[{"name":"v1","served":true,"storage":true,
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func unstructuredOf(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, json.Unmarshal([]byte(js), &u.Object))
	return u
}

func gadget(t *testing.T, name string) *unstructured.Unstructured {
	return unstructuredOf(t, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"namespace":"default","name":"`+name+`"}}`)
}

// TestDeletedCRDIsReportedOnceAndResumesWhenRecreated: an informer of a
// custom resource whose CRD is deleted at run time reports
// reflector.KindNotServed once, however many probes find it still gone,
// and picks up the objects of a re-created CRD without being restarted.
// Before KindNotServed, every retry reported a KindRejected 404.
func TestDeletedCRDIsReportedOnceAndResumesWhenRecreated(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	crd := unstructuredOf(t, gadgetCRD)
	_, err := e.srv.Create(crd)
	require.NoError(t, err)
	_, err = e.srv.Create(gadget(t, "g1"))
	require.NoError(t, err)
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	inf, err := informer.ForMetadata(e.factory, gvr, false)
	require.NoError(t, err)
	e.start(t)
	_, err = inf.Lister().Get("default", "g1")
	require.NoError(t, err)

	require.NoError(t, e.srv.Delete(crd))
	e.srv.DropWatches() // the real server ends them too
	// Probes every Backoff.Max (50ms here): wait for several.
	require.Eventually(t, func() bool { return inf.Stats().Errors[reflector.KindNotServed] >= 4 },
		waitFor, 5*time.Millisecond)
	notServed := 0
	for _, err := range e.errs.all() {
		if reflector.KindOf(err) == reflector.KindNotServed {
			notServed++
		}
		var re *reflector.Error
		require.True(t, errors.As(err, &re), "%v", err)
		require.NotEqual(t, reflector.KindRejected, re.Kind, "a 404 reported as an ordinary rejection: %v", err)
	}
	require.Equal(t, 1, notServed, "the deleted CRD is reported once: %v", e.errs.all())
	_, err = e.srv.Create(unstructuredOf(t, gadgetCRD))
	require.NoError(t, err)
	_, err = e.srv.Create(gadget(t, "g2"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := inf.Lister().Get("default", "g2")
		return err == nil
	}, waitFor, 5*time.Millisecond, "the informer resumes when the CRD is back")
	_, err = inf.Lister().Get("default", "g1")
	require.Error(t, err, "the CRD's deletion deleted its objects, and the relist says so")
}
