package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed31a95821/informer/internal/kubectltest"
	"github.com/stretchr/testify/require"
)

// TestKubectl drives the real kubectl against the fakeapi command, as a
// user would against a cluster: apply and apply a change, patch, set
// image, scale, explain, server-side apply with a conflict, get with the
// server's columns, events, leases, and custom resources from -crd and from
// kubectl apply. It needs kubectl on the PATH (v1.32 was used to write it)
// and builds the command, so it does not run under -short.
func TestKubectl(t *testing.T) {
	k := startKubectlTarget(t, "-crd", "testdata/widgets-crd.yaml")

	// apply, then apply a change: kubectl computes a strategic merge patch
	// from the last-applied annotation and the live object.
	require.Contains(t, k.Run("apply", "-f", "testdata/deployment.yaml"), "deployment.apps/web created")
	changed := k.Write("deployment.yaml", strings.Replace(k.Read("testdata/deployment.yaml"), "replicas: 2", "replicas: 3", 1))
	require.Contains(t, k.Run("apply", "-f", changed), "deployment.apps/web configured")
	require.Equal(t, "3", k.Run("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"))

	require.Contains(t, k.Run("patch", "deploy", "web", "-p", `{"spec":{"template":{"metadata":{"labels":{"tier":"front"}}}}}`),
		"deployment.apps/web patched")
	require.Contains(t, k.Run("patch", "deploy", "web", "--type=json", "-p", `[{"op":"add","path":"/metadata/labels/json","value":"yes"}]`),
		"deployment.apps/web patched")
	require.Contains(t, k.Run("set", "image", "deploy/web", "web=nginx:1.26"), "deployment.apps/web image updated")
	require.Equal(t, "nginx:1.26 envoy:1.30", k.Run("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[*].image}"),
		"set image changes one container and keeps the other")
	require.Contains(t, k.Run("scale", "deploy", "web", "--replicas=5"), "deployment.apps/web scaled")
	wide := k.Run("get", "deploy", "web", "-o", "wide")
	require.Regexp(t, `NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR`, wide)
	require.Regexp(t, `web\s+0/5\s+0\s+0\s+\S+\s+web,sidecar\s+nginx:1.26,envoy:1.30\s+app=web`, wide)

	explain := k.Run("explain", "deployment.spec.replicas")
	require.Contains(t, explain, "FIELD: replicas <integer>")

	// Server-side apply: created, then a second manager conflicts, then
	// forces.
	require.Contains(t, k.Run("apply", "--server-side", "-f", "testdata/configmap.yaml"), "configmap/settings serverside-applied")
	other := k.Write("configmap.yaml", strings.Replace(k.Read("testdata/configmap.yaml"), "blue", "red", 1))
	out, err := k.Try("apply", "--server-side", "--field-manager=other", "-f", other)
	require.Error(t, err)
	require.Contains(t, out, `conflict with "kubectl"`)
	require.Contains(t, k.Run("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", other), "serverside-applied")
	require.Equal(t, "red", k.Run("get", "cm", "settings", "-o", "jsonpath={.data.color}"))

	require.Contains(t, k.Run("run", "p1", "--image=nginx"), "pod/p1 created")
	pods := k.Run("get", "pods")
	require.Regexp(t, `NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE`, pods)
	require.Regexp(t, `p1\s+0/1\s+Pending\s+0\s+`, pods)
	require.Regexp(t, `default\s+Active`, k.Run("get", "ns"))
	require.Regexp(t, `kube-system\s+Active`, k.Run("get", "ns"))

	require.Contains(t, k.Run("create", "-f", "testdata/event.yaml"), "event/web.started created")
	events := k.Run("get", "events")
	require.Regexp(t, `LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE`, events)
	require.Regexp(t, `Normal\s+Started\s+deployment/web\s+the test wrote this event`, events)

	// Leases (coordination.k8s.io/v1), the objects leader election uses.
	lease := k.Write("lease.yaml", "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: ctl\n  namespace: kube-system\n"+
		"spec:\n  holderIdentity: replica-a\n  leaseDurationSeconds: 15\n")
	require.Contains(t, k.Run("apply", "-f", lease), "lease.coordination.k8s.io/ctl created")
	require.Regexp(t, `NAMESPACE\s+NAME\s+HOLDER\s+AGE\s+kube-system\s+ctl\s+replica-a\s+`, k.Run("get", "leases", "-A"))
	require.Contains(t, k.Run("explain", "lease.spec.holderIdentity"), "FIELD: holderIdentity <string>")

	// Custom resources: widgets from -crd, with their printer columns.
	require.Contains(t, k.Run("apply", "-f", "testdata/widget.yaml"), "widget.example.com/w1 created")
	require.Regexp(t, `NAME\s+SIZE\s+AGE\s+w1\s+3\s+`, k.Run("get", "widgets"))
	require.Contains(t, k.Run("patch", "wd", "w1", "--type=merge", "-p", `{"spec":{"size":4}}`), "widget.example.com/w1 patched")
	require.Equal(t, "4", k.Run("get", "wd", "w1", "-o", "jsonpath={.spec.size}"))
	require.Contains(t, k.Run("explain", "widgets"), "KIND:       Widget", "the CRD's schema is published")
	require.Contains(t, k.Run("delete", "widget", "w1"), `widget.example.com "w1" deleted`)

	// A CRD applied through the API, used, and deleted.
	crd := k.Write("sprockets-crd.yaml", strings.NewReplacer("widgets", "sprockets", "widget", "sprocket", "Widget", "Sprocket",
		"shortNames: [wd]", "shortNames: [sp]").Replace(strings.Split(k.Read("testdata/widgets-crd.yaml"), "---")[0]))
	require.Contains(t, k.Run("apply", "-f", crd), "customresourcedefinition.apiextensions.k8s.io/sprockets.example.com created")
	require.Contains(t, k.Run("wait", "--for=condition=Established", "crd/sprockets.example.com", "--timeout=20s"), "condition met")
	sprocket := k.Write("sprocket.yaml", "apiVersion: example.com/v1\nkind: Sprocket\nmetadata:\n  name: s1\nspec:\n  size: 7\n")
	require.Contains(t, k.Run("apply", "-f", sprocket), "sprocket.example.com/s1 created")
	require.Regexp(t, `s1\s+7\s+`, k.Run("get", "sprockets"))
	require.Contains(t, k.Run("delete", "crd", "sprockets.example.com"), "deleted")
	out, err = k.Try("get", "sprockets")
	require.Error(t, err, "sprockets are gone with their CRD: %s", out)
}

// A write that changes a field takes it from every other manager, /scale
// included: after "kubectl apply", "kubectl patch" of .spec.replicas,
// "kubectl set image" and "kubectl scale", a server-side apply of the
// first manifest conflicts with the two managers that own the changed
// fields now, kubectl through /scale and kubectl-set, as on kube-apiserver
// v1.37.2, not with kubectl-patch, whose replicas kubectl scale took.
func TestKubectlScaleTakesReplicasFromOtherManagers(t *testing.T) {
	k := startKubectlTarget(t)
	k.Run("apply", "-f", "testdata/deployment.yaml")
	k.Run("patch", "deploy", "web", "-p", `{"spec":{"replicas":3}}`)
	k.Run("set", "image", "deploy/web", "web=nginx:1.26")
	k.Run("scale", "deploy", "web", "--replicas=5")
	out, err := k.Try("apply", "--server-side", "-f", "testdata/deployment.yaml")
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "Apply failed with 2 conflicts")
	require.Contains(t, out, "conflicts with \"kubectl\" with subresource \"scale\" using apps/v1:\n- .spec.replicas\n")
	require.Contains(t, out, "conflicts with \"kubectl-set\" using apps/v1:\n- .spec.template.spec.containers[name=\"web\"].image\n")
	require.NotContains(t, out, "kubectl-patch")
}

// startKubectlTarget builds and starts the fakeapi command, serving HTTPS
// with a token, and returns a kubectl configured for it (its kubeconfig as
// the command wrote it, a private HOME and cache). It skips the test under
// -short and without kubectl.
func startKubectlTarget(t *testing.T, args ...string) *kubectltest.Kubectl {
	t.Helper()
	kubectl := kubectltest.Path(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakeapi")
	kubectltest.Build(t, bin, ".")
	// As a user would run it for kubectl: with a token, so it serves HTTPS
	// with a CA of its own and writes the kubeconfig kubectl then uses as is.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	url := kubectltest.Start(t, bin, append([]string{"-listen", "127.0.0.1:0", "-token", "kubectl-t0ken", "-kubeconfig-out", kubeconfig}, args...)...)
	require.True(t, strings.HasPrefix(url, "https://"), "served over TLS: %s", url)
	return kubectltest.New(t, kubectl, dir, kubeconfig)
}
