package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed31a95821/informer/fakeapi"
)

// -kubeconfig takes a list, merged as $KUBECONFIG is: here the cluster and
// the user live in one file and the context that joins them in another.
func TestDemoSyncsThroughAKubeconfigList(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := fakeapi.NewServer(fakeapi.Options{Token: "s3cret"})
	require.NoError(t, err)
	defer srv.Close()
	require.NoError(t, srv.SeedPods([]string{"a"}, 20))

	dir := t.TempDir()
	first := filepath.Join(dir, "contexts.yaml")
	second := filepath.Join(dir, "credentials.yaml")
	require.NoError(t, os.WriteFile(first, []byte("current-context: fake\ncontexts: [{name: fake, context: {cluster: c, user: u}}]\n"), 0o600))
	require.NoError(t, os.WriteFile(second, []byte(fmt.Sprintf(
		"clusters: [{name: c, cluster: {server: '%s'}}]\nusers: [{name: u, user: {token: s3cret}}]\n", srv.URL())), 0o600))

	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- run(ctx, config{kubeconfig: first + string(filepath.ListSeparator) + second, slowEvery: time.Millisecond}, &out)
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "synced in") }, 30*time.Second, 10*time.Millisecond, "%s", out.String())
	cancel()
	require.NoError(t, <-done)
	text := out.String()
	require.Contains(t, text, fmt.Sprintf("watching %s, context \"fake\" from [%s %s]", srv.URL(), first, second))
	require.Contains(t, text, "synced in")
}
