package informer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// widgetsServedAs starts a fakeapi server that serves Widget under plural,
// with one widget stored.
func widgetsServedAs(t *testing.T, plural string) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.NewServer(fakeapi.Options{Scheme: widgetScheme(), Resources: []fakeapi.ServedResource{
		{Resource: informer.Resource{Kind: widgetGV.WithKind("Widget"), Plural: plural}}}})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	_, err = srv.Create(&Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "w1"}, Spec: WidgetSpec{Size: 3}})
	require.NoError(t, err)
	return srv
}

// For[T] finds T's resource through the server's discovery: a plural the
// guess would get wrong ("widgets") is found as the server names it, with
// no override. Before discovery, For guessed "widgets", and the informer
// never synced (404 on every list).
func TestForFindsTheResourceThroughDiscovery(t *testing.T) {
	srv := widgetsServedAs(t, "gizmos")
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{Scheme: widgetScheme()})
	defer factory.Shutdown()
	widgets, err := informer.For[*Widget](factory)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	factory.Start(ctx)
	require.Equal(t, map[string]bool{"gizmos.example.com": true}, factory.WaitForCacheSync(ctx))
	got, err := widgets.Lister().Namespace("shop").Get("w1")
	require.NoError(t, err)
	assert.Equal(t, 3, got.Spec.Size)
}

// An explicit override wins over discovery, whatever the server says
// (discovery.Resolver): the informer is the override's, not discovery's.
// TestPluralOverrideIsHonouredByFor shows an override served end to end.
func TestOverrideWinsOverDiscovery(t *testing.T) {
	srv := widgetsServedAs(t, "gizmos")
	override := informer.Resource{Kind: widgetGV.WithKind("Widget"), Plural: "doohickeys", ClusterScoped: true}
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{
		Scheme: widgetScheme(), Resources: []informer.Resource{override}})
	defer factory.Shutdown()
	_, err := informer.For[*Widget](factory)
	require.NoError(t, err)
	names := map[string]bool{}
	for name := range factory.WaitForCacheSync(canceled()) {
		names[name] = true
	}
	assert.Equal(t, map[string]bool{"doohickeys.example.com": true}, names)
	served, err := factory.Discovery().Resource(context.Background(), widgetGV.WithKind("Widget"))
	require.NoError(t, err)
	assert.Equal(t, "gizmos", served.Plural, "discovery said otherwise, and lost")
}

// A kind the server's discovery does not list is refused by For with a
// NoKindMatchError, rather than guessed into an informer that can only
// ever hear 404.
func TestForRefusesAKindTheServerDoesNotServe(t *testing.T) {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{Scheme: widgetScheme()})
	defer factory.Shutdown()
	_, err = informer.For[*Widget](factory)
	require.Error(t, err)
	assert.True(t, meta.IsNoMatchError(err), "%v", err)
}

// Without a server to ask, a factory guesses: one fed from memory, or one
// whose server has no discovery (here, none at all).
func TestForGuessesWhenDiscoveryIsUnreachable(t *testing.T) {
	factory := informer.NewFactory(rest.Config{Host: "http://127.0.0.1:1"}, informer.FactoryOptions{Scheme: widgetScheme()})
	defer factory.Shutdown()
	_, err := informer.For[*Widget](factory)
	require.NoError(t, err)
	names := map[string]bool{}
	for name := range factory.WaitForCacheSync(canceled()) {
		names[name] = true
	}
	assert.Equal(t, map[string]bool{"widgets.example.com": true}, names)
}

// canceled is a context already done: WaitForCacheSync then only lists
// the informers.
func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
