package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/examples/controller"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"
)

// TestClientAndControllerRealAPI points client/ and the example controller
// at a real kube-apiserver: every verb and all three patch types in both
// encodings, the typed errors, and the controller converging on a summary.
func TestClientAndControllerRealAPI(t *testing.T) {
	cluster := realapi.Start(t)
	cfg, err := kubeconfig.LoadKubeconfig(cluster.Kubeconfig)
	require.NoError(t, err)
	t.Run("client", func(t *testing.T) {
		for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
			c := cfg
			c.ContentType = ct
			t.Run(ct, func(t *testing.T) {
				checkClientVerbs(t, c, map[string]string{rest.ContentTypeJSON: "client-json", rest.ContentTypeProtobuf: "client-pb"}[ct])
			})
		}
	})
	t.Run("controller", func(t *testing.T) { checkControllerConverges(t, cfg) })
}

func newRealClient(t *testing.T, cfg rest.Config) *client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	return c
}

func forType[T interface {
	*corev1.Pod | *corev1.Namespace | *corev1.Service | *appsv1.Deployment
	runtime.Object
}](t *testing.T, c *client.Client) *client.Resource[T] {
	t.Helper()
	r, err := client.For[T](c)
	require.NoError(t, err)
	return r
}

func createNamespace(t *testing.T, c *client.Client, name string) {
	t.Helper()
	_, err := forType[*corev1.Namespace](t, c).Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err, "a cluster-scoped create")
}

func realPausePod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

func checkClientVerbs(t *testing.T, cfg rest.Config, ns string) {
	ctx := context.Background()
	c := newRealClient(t, cfg)
	createNamespace(t, c, ns)
	pods := forType[*corev1.Pod](t, c)

	p := realPausePod("web-1", map[string]string{"app": "web"})
	p.Namespace = ns
	created, err := pods.Create(ctx, p, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := pods.Get(ctx, ns, "web-1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.UID, got.UID)

	stale := got.DeepCopy()
	got.Labels["tier"] = "front"
	_, err = pods.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	stale.Labels["tier"] = "back"
	_, err = pods.Update(ctx, stale, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsConflict(err), "stale update: %v", err)

	patches := []struct {
		pt   types.PatchType
		body string
		key  string
	}{
		{types.MergePatchType, `{"metadata":{"annotations":{"merge":"yes"}}}`, "merge"},
		{types.StrategicMergePatchType, `{"metadata":{"annotations":{"strategic":"yes"}}}`, "strategic"},
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/annotations/json","value":"yes"}]`, "json"},
	}
	for _, pc := range patches {
		patched, err := pods.Patch(ctx, ns, "web-1", pc.pt, []byte(pc.body), metav1.PatchOptions{}, "")
		require.NoError(t, err, "%s", pc.pt)
		assert.Equal(t, "yes", patched.Annotations[pc.key], "%s", pc.pt)
	}

	status := got.DeepCopy()
	latest, err := pods.Get(ctx, ns, "web-1", metav1.GetOptions{})
	require.NoError(t, err)
	status.ResourceVersion = latest.ResourceVersion
	status.Status.Message = "checked"
	afterStatus, err := pods.UpdateStatus(ctx, status, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "checked", afterStatus.Status.Message)

	list, rv, err := pods.List(ctx, ns, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list, 1)
	assert.NotEmpty(t, rv)

	_, err = pods.Get(ctx, ns, "nope", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))
	assert.False(t, errors.Is(err, client.ErrUnserved))

	wrongUID := types.UID("not-the-uid")
	zero := int64(0)
	err = pods.Delete(ctx, ns, "web-1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	assert.True(t, apierrors.IsConflict(err), "precondition: %v", err)
	require.NoError(t, pods.Delete(ctx, ns, "web-1", metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &created.UID}}))

	// A resource the server does not serve, named by an override.
	uc, err := client.New(cfg, client.Options{Resources: []informer.Resource{{Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Plural: "widgets"}}})
	require.NoError(t, err)
	_, err = forType[*corev1.Pod](t, uc).Create(ctx, p, metav1.CreateOptions{})
	var unserved *client.UnservedError
	assert.ErrorAs(t, err, &unserved, "%v", err)
}

func checkControllerConverges(t *testing.T, cfg rest.Config) {
	ctx := context.Background()
	const ns = "summary"
	c := newRealClient(t, cfg)
	createNamespace(t, c, ns)
	web := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: web},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: realPausePod("", nil).Spec},
		},
	}
	deployments := forType[*appsv1.Deployment](t, c)
	_, err := deployments.Create(ctx, d, metav1.CreateOptions{})
	require.NoError(t, err)
	pods := forType[*corev1.Pod](t, c)
	for i := range 2 {
		p := realPausePod(fmt.Sprint("web-", i), web)
		p.Namespace = ns
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: web, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	_, err = forType[*corev1.Service](t, c).Create(ctx, svc, metav1.CreateOptions{})
	require.NoError(t, err)

	ctrl, err := controller.New(cfg, controller.Options{Namespace: ns, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(runCtx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	waitForSummary(t, deployments, ns, "web", "pods=2 services=web")

	zero := int64(0)
	require.NoError(t, pods.Delete(ctx, ns, "web-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	waitForSummary(t, deployments, ns, "web", "pods=1 services=web")
}

func waitForSummary(t *testing.T, deployments *client.Resource[*appsv1.Deployment], ns, name, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		d, err := deployments.Get(context.Background(), ns, name, metav1.GetOptions{})
		require.NoError(t, err)
		if got = d.Annotations[controller.SummaryAnnotation]; got == want {
			return
		}
		time.Sleep(50 * time.Millisecond) // polling the server for a condition, with a deadline
	}
	t.Fatalf("deployment %s/%s: summary %q, want %q", ns, name, got, want)
}
