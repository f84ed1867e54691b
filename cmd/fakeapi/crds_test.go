package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/fakeapi"
)

func TestCRDFlag(t *testing.T) {
	var sink strings.Builder
	c, err := parseFlags([]string{"-crd", "a.yaml", "-crd", "b.yaml"}, &sink)
	require.NoError(t, err)
	require.Equal(t, crdFiles{"a.yaml", "b.yaml"}, c.crds, "repeatable")

	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	require.NoError(t, serveCRDs(srv, crdFiles{"testdata/widgets-crd.yaml"}))
	for _, resource := range []string{"widgets", "gizmos"} {
		_, err := srv.Objects(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: resource})
		require.NoError(t, err, "%s are served", resource)
	}

	dir := t.TempDir()
	notCRD := filepath.Join(dir, "pod.yaml")
	require.NoError(t, os.WriteFile(notCRD, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"), 0o600))
	empty := filepath.Join(dir, "empty.yaml")
	require.NoError(t, os.WriteFile(empty, []byte("---\n"), 0o600))
	for _, f := range []string{notCRD, empty, filepath.Join(dir, "missing.yaml"), "testdata/widgets-crd.yaml"} {
		require.Error(t, serveCRDs(srv, crdFiles{f}), "%s", f)
	}
}
