package integration

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/events"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"
)

// TestChassisRealAPI points the controller chassis at a real
// kube-apiserver: server-side apply round trips and conflicts (typed,
// unstructured, status), the finalizer helpers, and the event recorder's
// events.k8s.io/v1 writes, aggregated and visible through core/v1 too.
func TestChassisRealAPI(t *testing.T) {
	cluster := realapi.Start(t)
	cfg, err := kubeconfig.LoadKubeconfig(cluster.Kubeconfig)
	require.NoError(t, err)
	c := newRealClient(t, cfg)
	createNamespace(t, c, "chassis")
	cms, err := client.For[*corev1.ConfigMap](c)
	require.NoError(t, err)
	t.Run("apply", func(t *testing.T) { checkRealApply(t, c, cms) })
	t.Run("finalizers", func(t *testing.T) { checkRealFinalizers(t, cms) })
	t.Run("events", func(t *testing.T) { checkRealEvents(t, cfg, cms, cluster.Kubeconfig) })
}

func settingsMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "chassis", Name: name}, Data: data}
}

func checkRealApply(t *testing.T, c *client.Client, cms *client.Resource[*corev1.ConfigMap]) {
	ctx := context.Background()
	created, err := cms.Apply(ctx, settingsMap("settings", map[string]string{"colour": "blue"}), client.ApplyOptions{FieldManager: "alice"})
	require.NoError(t, err)
	assert.Equal(t, "blue", created.Data["colour"])
	again, err := cms.Apply(ctx, created, client.ApplyOptions{FieldManager: "alice"})
	require.NoError(t, err, "re-applying what was read back: managedFields are dropped")
	assert.Equal(t, created.ResourceVersion, again.ResourceVersion)

	_, err = cms.Apply(ctx, settingsMap("settings", map[string]string{"colour": "red"}), client.ApplyOptions{FieldManager: "bob"})
	var conflict *client.ApplyConflictError
	require.ErrorAs(t, err, &conflict)
	assert.True(t, apierrors.IsConflict(err))
	require.Len(t, conflict.Conflicts, 1)
	assert.Equal(t, "alice", conflict.Conflicts[0].Manager)
	assert.Equal(t, ".data.colour", conflict.Conflicts[0].Field)
	forced, err := cms.Apply(ctx, settingsMap("settings", map[string]string{"colour": "red"}), client.ApplyOptions{FieldManager: "bob", Force: true})
	require.NoError(t, err)
	assert.Equal(t, "red", forced.Data["colour"])

	u := client.ForUnstructured(c, cms.Resource())
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "chassis", "name": "settings"}, "data": map[string]any{"size": "L"}}}
	out, err := u.Apply(ctx, obj, client.ApplyOptions{FieldManager: "carol"})
	require.NoError(t, err)
	data, _, _ := unstructured.NestedStringMap(out.Object, "data")
	assert.Equal(t, map[string]string{"colour": "red", "size": "L"}, data)

	// Status: a pod's status, applied by another manager than its spec.
	pods, err := client.For[*corev1.Pod](c)
	require.NoError(t, err)
	p := realPausePod("status-apply", nil)
	p.Namespace = "chassis"
	_, err = pods.Apply(ctx, p, client.ApplyOptions{FieldManager: "ci"})
	require.NoError(t, err)
	st := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "chassis", Name: "status-apply"},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: "example.com/Checked", Status: corev1.ConditionTrue}}}}
	withStatus, err := pods.ApplyStatus(ctx, st, client.ApplyOptions{FieldManager: "checker"})
	require.NoError(t, err)
	found := false
	for _, cond := range withStatus.Status.Conditions {
		found = found || cond.Type == "example.com/Checked"
	}
	assert.True(t, found, "the applied condition: %+v", withStatus.Status.Conditions)
}

func checkRealFinalizers(t *testing.T, cms *client.Resource[*corev1.ConfigMap]) {
	ctx := context.Background()
	created, err := cms.Create(ctx, settingsMap("guarded", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	withF, err := cms.AddFinalizer(ctx, created, "example.com/cleanup")
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com/cleanup"}, withF.Finalizers)
	other := withF.DeepCopy()
	other.Finalizers = append(other.Finalizers, "other.io/keep")
	_, err = cms.Update(ctx, other, metav1.UpdateOptions{})
	require.NoError(t, err)
	removed, err := cms.RemoveFinalizer(ctx, withF, "example.com/cleanup") // a stale copy: conflict, re-read
	require.NoError(t, err)
	assert.Equal(t, []string{"other.io/keep"}, removed.Finalizers)
	require.NoError(t, cms.Delete(ctx, "chassis", "guarded", metav1.DeleteOptions{}))
	pending, err := cms.Get(ctx, "chassis", "guarded", metav1.GetOptions{})
	require.NoError(t, err)
	_, err = cms.RemoveFinalizer(ctx, pending, "other.io/keep")
	require.NoError(t, err)
	_, err = cms.Get(ctx, "chassis", "guarded", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

func checkRealEvents(t *testing.T, cfg rest.Config, cms *client.Resource[*corev1.ConfigMap], kubeconfig string) {
	rec, err := events.NewRecorder(cfg, events.Options{Component: "chassis-test"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { rec.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	subject, err := cms.Create(context.Background(), settingsMap("subject", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	for range 6 {
		rec.Eventf(subject, corev1.EventTypeWarning, "FailedSync", "the same failure")
	}
	deadline := time.Now().Add(time.Minute)
	for s := rec.Stats(); s.Created+s.Patched+s.Failed < 6; s = rec.Stats() {
		require.True(t, time.Now().Before(deadline), "%+v", s)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, events.Stats{Created: 1, Patched: 5}, rec.Stats())

	// Read through core/v1: the real server shows events.k8s.io/v1 Events
	// there too, their series counting the repeats.
	c := newRealClient(t, cfg)
	core, err := client.For[*corev1.Event](c)
	require.NoError(t, err)
	list, _, err := core.List(context.Background(), "chassis", metav1.ListOptions{FieldSelector: "involvedObject.name=subject"})
	require.NoError(t, err)
	require.Len(t, list, 1)
	ev := list[0]
	require.NotNil(t, ev.Series, "written through events.k8s.io/v1")
	assert.Equal(t, int32(6), ev.Series.Count)
	assert.Equal(t, "the same failure", ev.Message)
	assert.Equal(t, "chassis-test", ev.ReportingController)

	// And kubectl shows it, as a user would look.
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on the PATH")
	}
	run := func(args ...string) string {
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig, "-n", "chassis"}, args...)...).CombinedOutput()
		t.Logf("$ kubectl %s\n%s", strings.Join(args, " "), out)
		require.NoError(t, err)
		return string(out)
	}
	assert.Regexp(t, `Warning\s+FailedSync\s+configmap/subject\s+the same failure`, run("get", "events"))
	assert.Regexp(t, `Warning\s+FailedSync\s+\S+ \(x6 over \S+\)\s+chassis-test\s+the same failure`, run("describe", "configmap", "subject"))
}
