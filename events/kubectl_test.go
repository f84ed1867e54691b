package events_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/events"
	"github.com/seed31a95821/informer/fakeapi"
)

// The real kubectl shows the recorder's Events against the fake API
// server: in kubectl get events, and under the pod in kubectl describe,
// each with its count. It needs kubectl on the PATH.
func TestKubectlShowsEvents(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on the PATH")
	}
	srv := serveWith(t, fakeapi.Options{})
	created, err := srv.Create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "web:1"}}},
	})
	require.NoError(t, err)
	pod := created.(*corev1.Pod)
	rec := start(t, srv, events.Options{Component: "web-controller"})
	for range 7 {
		rec.Eventf(pod, corev1.EventTypeWarning, "FailedSync", "image %q not found", "web:1")
	}
	rec.Eventf(pod, corev1.EventTypeNormal, "Scheduled", "placed on node-1")
	settle(t, rec, 8)

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "`+srv.URL()+`"}}]
users: [{name: me, user: {}}]
contexts: [{name: fake, context: {cluster: fake, user: me, namespace: shop}}]
current-context: fake
`), 0o600))
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		t.Logf("$ kubectl %s\n%s", strings.Join(args, " "), out)
		require.NoError(t, err)
		return string(out)
	}
	got := run("get", "events")
	require.Regexp(t, `Warning\s+FailedSync\s+pod/web\s+image "web:1" not found`, got)
	require.Regexp(t, `Normal\s+Scheduled\s+pod/web\s+placed on node-1`, got)
	require.Regexp(t, `\(x7 over`, got, "the count of the aggregated event")
	described := run("describe", "pod", "web")
	require.Regexp(t, `Warning\s+FailedSync\s+\S+ \(x7 over \S+\)\s+web-controller\s+image "web:1" not found`, described)
	require.Regexp(t, `Normal\s+Scheduled\s+\S+\s+web-controller\s+placed on node-1`, described)
}
