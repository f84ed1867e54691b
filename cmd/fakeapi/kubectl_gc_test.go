package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKubectlDeleteCascades deletes an owner with each of kubectl's
// --cascade choices and checks what fakeapi's garbage collector did with
// its dependent, as kube-controller-manager's would. Not under -short.
func TestKubectlDeleteCascades(t *testing.T) {
	k := startKubectlTarget(t)
	for _, cascade := range []string{"background", "foreground", "orphan"} {
		owner, child := "owner-"+cascade, "child-"+cascade
		require.Contains(t, k.Run("create", "configmap", owner), "created")
		uid := k.Run("get", "configmap", owner, "-o", "jsonpath={.metadata.uid}")
		manifest := k.Write(child+".yaml", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: %s
    uid: %s
    blockOwnerDeletion: true
`, child, owner, uid))
		require.Contains(t, k.Run("apply", "-f", manifest), "created")

		require.Contains(t, k.Run("delete", "configmap", owner, "--cascade="+cascade, "--timeout=20s"), "deleted")
		out, err := k.Try("get", "configmap", owner)
		require.Error(t, err, "the owner is gone (%s): %s", cascade, out)
		out, err = k.Try("get", "configmap", child, "-o", "jsonpath={.metadata.ownerReferences}")
		if cascade == "orphan" {
			require.NoError(t, err, "the orphaned dependent stays: %s", out)
			require.Empty(t, out, "without its reference to the owner")
			continue
		}
		require.Error(t, err, "the dependent is collected (%s): %s", cascade, out)
		require.Contains(t, out, "NotFound")
	}
}
