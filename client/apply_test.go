package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// inShop serves a fakeapi with the namespace "shop" and returns a client
// of it and its Resource for T: the set-up of every test here that talks
// to a server.
func inShop[T runtime.Object](t *testing.T) (*client.Client, *client.Resource[T]) {
	t.Helper()
	srv := serve(t, fakeapi.Options{})
	cfg := rest.Config{Host: srv.URL()}
	createNamespace(t, cfg, "shop")
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	r, err := client.For[T](c)
	require.NoError(t, err)
	return c, r
}

func configMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: data}
}

// Apply creates, merges, and records its manager; a second manager that
// sends a field the first owns gets an *ApplyConflictError naming the
// owner and the field, and Force takes the field over.
func TestApplyRoundTripAndConflict(t *testing.T) {
	_, cms := inShop[*corev1.ConfigMap](t)
	ctx := context.Background()

	created, err := cms.Apply(ctx, configMap(map[string]string{"colour": "blue"}), client.ApplyOptions{FieldManager: "alice"})
	require.NoError(t, err)
	assert.Equal(t, "blue", created.Data["colour"])
	require.Len(t, created.ManagedFields, 1)
	assert.Equal(t, "alice", created.ManagedFields[0].Manager)
	assert.Equal(t, metav1.ManagedFieldsOperationApply, created.ManagedFields[0].Operation)

	// Re-applying what was read back (managedFields and all) is accepted:
	// the client drops them.
	again, err := cms.Apply(ctx, created, client.ApplyOptions{FieldManager: "alice"})
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion, again.ResourceVersion, "an apply that changes nothing writes nothing")

	_, err = cms.Apply(ctx, configMap(map[string]string{"colour": "red", "size": "L"}), client.ApplyOptions{FieldManager: "bob"})
	var conflict *client.ApplyConflictError
	require.ErrorAs(t, err, &conflict)
	assert.True(t, apierrors.IsConflict(err), "the typed error unwraps to the server's 409")
	assert.Equal(t, []client.FieldConflict{{Manager: "alice", Field: ".data.colour", Message: `conflict with "alice"`}}, conflict.Conflicts)
	assert.Contains(t, err.Error(), `.data.colour owned by "alice"`)

	forced, err := cms.Apply(ctx, configMap(map[string]string{"colour": "red", "size": "L"}), client.ApplyOptions{FieldManager: "bob", Force: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"colour": "red", "size": "L"}, forced.Data)

	// alice stops sending colour: she owns nothing, and bob keeps it.
	_, err = cms.Apply(ctx, configMap(map[string]string{"mood": "calm"}), client.ApplyOptions{FieldManager: "alice"})
	require.NoError(t, err)
	got, err := cms.Get(ctx, "shop", "settings", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"colour": "red", "size": "L", "mood": "calm"}, got.Data)
}

// ApplyStatus owns status fields only; Apply to the object ignores status.
func TestApplyStatus(t *testing.T) {
	_, deps := inShop[*appsv1.Deployment](t)
	ctx := context.Background()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "web:1"}}},
			},
		},
	}
	_, err := deps.Apply(ctx, d, client.ApplyOptions{FieldManager: "ci"})
	require.NoError(t, err)
	st := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2}}
	out, err := deps.ApplyStatus(ctx, st, client.ApplyOptions{FieldManager: "web-controller"})
	require.NoError(t, err)
	assert.Equal(t, int32(2), out.Status.Replicas)
	assert.Equal(t, int32(2), *out.Spec.Replicas, "a status apply leaves the spec alone")
	var managers []string
	for _, e := range out.ManagedFields {
		managers = append(managers, e.Manager+"/"+e.Subresource)
	}
	assert.ElementsMatch(t, []string{"ci/", "web-controller/status"}, managers)
}

// The unstructured form sends only the fields set, so two managers can
// own different fields of one object.
func TestApplyUnstructured(t *testing.T) {
	c, cms := inShop[*corev1.ConfigMap](t)
	u := client.ForUnstructured(c, cms.Resource())
	ctx := context.Background()
	obj := func(key, value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "shop", "name": "settings"},
			"data":     map[string]any{key: value},
		}}
	}
	_, err := u.Apply(ctx, obj("a", "1"), client.ApplyOptions{FieldManager: "one"})
	require.NoError(t, err)
	out, err := u.Apply(ctx, obj("b", "2"), client.ApplyOptions{FieldManager: "two"})
	require.NoError(t, err)
	data, _, _ := unstructured.NestedStringMap(out.Object, "data")
	assert.Equal(t, map[string]string{"a": "1", "b": "2"}, data)

	_, err = u.Apply(ctx, obj("a", "3"), client.ApplyOptions{FieldManager: "two"})
	var conflict *client.ApplyConflictError
	require.ErrorAs(t, err, &conflict)
	assert.Equal(t, "one", conflict.Conflicts[0].Manager)

	got, err := u.Get(ctx, "shop", "settings", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, out.GetResourceVersion(), got.GetResourceVersion())

	wrong := obj("a", "1")
	wrong.SetKind("Secret")
	_, err = u.Apply(ctx, wrong, client.ApplyOptions{FieldManager: "one"})
	assert.ErrorIs(t, err, client.ErrInvalidObject)
}

// Bad apply requests are refused before any request.
func TestApplyNeedsAManagerAndAName(t *testing.T) {
	c, err := client.New(rest.Config{Host: "http://127.0.0.1:1"}, client.Options{})
	require.NoError(t, err)
	cms, err := client.For[*corev1.ConfigMap](c)
	require.NoError(t, err)
	_, err = cms.Apply(context.Background(), configMap(nil), client.ApplyOptions{})
	assert.ErrorIs(t, err, client.ErrInvalidObject)
	nameless := configMap(nil)
	nameless.Name = ""
	_, err = cms.Apply(context.Background(), nameless, client.ApplyOptions{FieldManager: "x"})
	assert.ErrorIs(t, err, client.ErrInvalidObject)
}

// AddFinalizer and RemoveFinalizer are idempotent, keep a finalizer
// another client added meanwhile, and removing the last one lets a
// deletion finish.
func TestFinalizers(t *testing.T) {
	_, cms := inShop[*corev1.ConfigMap](t)
	ctx := context.Background()
	created, err := cms.Create(ctx, configMap(nil), metav1.CreateOptions{})
	require.NoError(t, err)

	withF, err := cms.AddFinalizer(ctx, created, "example.com/cleanup")
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com/cleanup"}, withF.Finalizers)
	same, err := cms.AddFinalizer(ctx, withF, "example.com/cleanup")
	require.NoError(t, err)
	assert.Equal(t, withF.ResourceVersion, same.ResourceVersion, "already there: no write")

	// Someone adds another finalizer; our stale copy must not drop it.
	other := withF.DeepCopy()
	other.Finalizers = append(other.Finalizers, "other.io/keep")
	_, err = cms.Update(ctx, other, metav1.UpdateOptions{})
	require.NoError(t, err)
	removed, err := cms.RemoveFinalizer(ctx, withF, "example.com/cleanup")
	require.NoError(t, err)
	assert.Equal(t, []string{"other.io/keep"}, removed.Finalizers)

	removedAgain, err := cms.RemoveFinalizer(ctx, removed, "example.com/cleanup")
	require.NoError(t, err)
	assert.Equal(t, removed.ResourceVersion, removedAgain.ResourceVersion)

	// Deleting waits for the last finalizer; removing it finishes the delete.
	require.NoError(t, cms.Delete(ctx, "shop", "settings", metav1.DeleteOptions{}))
	pending, err := cms.Get(ctx, "shop", "settings", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, pending.DeletionTimestamp)
	_, err = cms.RemoveFinalizer(ctx, pending, "other.io/keep")
	require.NoError(t, err)
	_, err = cms.Get(ctx, "shop", "settings", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "got %v", err)
	assert.False(t, errors.Is(err, client.ErrUnserved))
}
