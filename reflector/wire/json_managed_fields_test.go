package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/rest"
)

// Every kind the default scheme knows gets its skipping types: a kind for
// which StructOf could not build them would silently decode managedFields.
func TestJSONSkipBuildsForTheSchemesKinds(t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("Pod"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		corev1.SchemeGroupVersion.WithKind("Secret"),
		corev1.SchemeGroupVersion.WithKind("Node"),
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
	} {
		tgt, err := newTarget(NewScheme(), gvk, false)
		require.NoError(t, err)
		assert.NotNil(t, newJSONSkip(tgt.itemType, tgt.listType), gvk.Kind)
	}
	meta, err := newTarget(NewScheme(), schema.GroupVersionKind{}, true)
	require.NoError(t, err)
	assert.NotNil(t, newJSONSkip(meta.itemType, meta.listType), "PartialObjectMetadata")
}

// dropTarget is the pod target of a ListerWatcher made with
// DropManagedFields.
func dropTarget(t *testing.T) *target {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	tgt.dropManagedFields = true
	tgt.jsonSkip = newJSONSkip(tgt.itemType, tgt.listType)
	require.NotNil(t, tgt.jsonSkip)
	return tgt
}

// withoutManagedFields is what encoding/json makes of raw, managedFields
// dropped after.
func withoutManagedFields(t *testing.T, raw []byte) *corev1.Pod {
	var p corev1.Pod
	require.NoError(t, json.Unmarshal(raw, &p))
	p.ManagedFields = nil
	return &p
}

// Skipping managedFields while decoding JSON gives what decoding them and
// dropping them gives, in a list and in a watch; and they are skipped, not
// decoded (fewer allocations).
func TestJSONSkipsManagedFields(t *testing.T) {
	tgt := dropTarget(t)
	pod := benchPod(1)
	raw, err := json.Marshal(pod)
	require.NoError(t, err)
	want := withoutManagedFields(t, raw)
	want.APIVersion, want.Kind = "v1", "Pod"

	enc := newWireEncoder(rest.ContentTypeJSON)
	dec := newJSONEventDecoder(bytes.NewReader(enc.frame(t, watch.Added, pod)), rest.DefaultMaxFrameBytes, tgt)
	ev, err := dec.Next()
	require.NoError(t, err)
	assert.True(t, reflect.DeepEqual(want, ev.Object))

	list, err := json.Marshal(&corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []corev1.Pod{*pod, *pod}})
	require.NoError(t, err)
	got, err := tgt.decodeList(rest.ContentTypeJSON, list)
	require.NoError(t, err)
	items := got.(*corev1.PodList).Items
	require.Len(t, items, 2)
	assert.True(t, reflect.DeepEqual(*want, items[1]))

	plain, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	skipped := testing.AllocsPerRun(50, func() { _, _ = tgt.decodeList(rest.ContentTypeJSON, list) })
	decoded := testing.AllocsPerRun(50, func() { _, _ = plain.decodeList(rest.ContentTypeJSON, list) })
	assert.Less(t, skipped, decoded-20, "managedFields are skipped, not decoded")
}

// Skipped is not unchecked: managedFields that are not well-formed JSON
// still make the object malformed.
func TestJSONSkippedManagedFieldsMustBeWellFormed(t *testing.T) {
	tgt := dropTarget(t)
	_, err := tgt.decodeList(rest.ContentTypeJSON, []byte(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a","managedFields":[{"manager":}]}}]}`))
	require.ErrorIs(t, err, ErrMalformedObject)
}
