package integration

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// The conformance test runs the same scenarios, through the same code, against
// fakeapi and against a real kube-apiserver (built and started by
// integration/realapi), and prints a table of the outcomes: scenario x server.
// Scenarios drive the whole informer stack (kubeconfig loader, HTTP
// ListerWatcher with TLS verification on, reflector, queue, cache, handlers)
// through a TCP proxy that can break the network; wire probes compare the two
// servers' answers to the same raw requests. Where fakeapi answers differently
// from the real server, that is a bug in fakeapi unless it is listed, with its
// reason, in knownDifferences.
//
//	go test -run TestConformance -v ./integration/                   # both columns
//	go test -short -run TestConformance -v ./integration/            # fakeapi only
//	go test -run TestConformance ./integration/ -conformance.update  # also rewrite docs/fakeapi.md

var updateConformanceDoc = flag.Bool("conformance.update", false,
	"write the conformance table into docs/fakeapi.md")

// convergeWithin bounds every wait for a cache to reach the server's state.
const convergeWithin = 30 * time.Second

func TestConformance(t *testing.T) {
	// Registered first, so it runs last: after every server, proxy and
	// informer has been stopped by its own cleanup.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	table := newConformanceTable()
	started := time.Now()
	columns := []struct {
		name  string
		start func(*testing.T) *target
	}{{fakeapiColumn, newFakeTarget}, {realColumn, newRealTarget}}
	for _, col := range columns {
		// Each column is a subtest, so a server that fails to start fails
		// its own column and the other still runs and is reported.
		t.Run(col.name, func(t *testing.T) {
			tg := col.start(t)
			if tg.skipped != "" {
				table.skipColumn(tg.name, tg.skipped)
				t.Skip(tg.skipped)
			}
			runScenarios(t, tg, table)
			runProbes(t, tg, table)
		})
	}
	t.Logf("conformance run took %v", time.Since(started).Round(time.Second))
	t.Log("\n" + table.markdown())
	table.checkProbes(t)
	if *updateConformanceDoc {
		require.NoError(t, table.writeDoc(t, "../docs/fakeapi.md"))
	}
}

// runScenarios runs every scenario, under each encoding, as a subtest, and
// records each outcome in the table.
func runScenarios(t *testing.T, tg *target, table *conformanceTable) {
	for _, sc := range scenarios {
		for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
			c := &cell{}
			ok := t.Run(sc.id+"-"+encodingName(ct), func(t *testing.T) {
				e := newEnv(t, tg, sc, ct, c)
				sc.run(e)
			})
			c.finish(ok)
			table.set(sc.row(ct), tg.name, c)
		}
	}
}

func encodingName(ct string) string {
	if ct == rest.ContentTypeProtobuf {
		return "protobuf"
	}
	return "json"
}

// scenario is one row of the table, run once per encoding.
type scenario struct {
	id   string
	name string
	// history: the scenario needs a server whose compaction reaches its
	// watches (target.history).
	history bool
	run     func(e *env)
}

func (sc scenario) row(ct string) string {
	return fmt.Sprintf("%s. %s [%s]", sc.id, sc.name, encodingName(ct))
}

// env is what a scenario gets: its own namespace on one server, a proxy in
// front of that server, the rest.Config that goes through the proxy, and a
// client that goes around it.
type env struct {
	t        *testing.T
	target   string // the column: fakeapi or kube-apiserver
	scenario string // the scenario's id
	srv      *apiServer
	client   *apiClient
	ns       string
	cfg      rest.Config // through the proxy, with the scenario's content type
	proxy    *tcpProxy
	cell     *cell
}

func newEnv(t *testing.T, tg *target, sc scenario, ct string, c *cell) *env {
	srv := tg.main
	if sc.history {
		srv = tg.history
	}
	cfg, proxy := viaProxy(t, srv.cfg)
	cfg.ContentType = ct
	e := &env{t: t, target: tg.name, scenario: sc.id, srv: srv, client: srv.client, cfg: cfg, proxy: proxy, cell: c,
		ns: "conf-" + sc.id + "-" + encodingName(ct)}
	e.step("create namespace " + e.ns)
	e.namespace(e.ns)
	return e
}

// step names what the scenario is doing, so that a failure in the table says
// where it happened.
func (e *env) step(what string) { e.cell.step = what; e.t.Log("step: " + what) }

// knownGaps lists the scenarios fakeapi is known to fail, each with the
// reason. Such a scenario, against fakeapi, ends as skipped ("known gap")
// at the point where the gap shows, instead of failing; once fakeapi is
// fixed, a listed gap that no longer shows fails the scenario, so the list
// cannot go stale. docs/fakeapi.md explains each.
var knownGaps = map[string]string{}

// gap is the known gap of this scenario against this server, or "".
func (e *env) gap() string {
	if e.target != fakeapiColumn {
		return ""
	}
	return knownGaps[e.scenario]
}

// requireOrGap is require.True(ok), except that a known gap of this
// scenario ends it as skipped with the gap's reason, and a known gap that
// did not show fails it.
func (e *env) requireOrGap(ok bool, format string, args ...any) {
	e.t.Helper()
	gap := e.gap()
	switch {
	case !ok && gap != "":
		e.cell.skipped = "known gap: " + gap
		e.t.Skip(e.cell.skipped)
	case ok && gap != "":
		e.t.Fatalf("scenario %s is listed in knownGaps (%s) but passed this check: remove it from the list", e.scenario, gap)
	}
	require.True(e.t, ok, append([]any{format}, args...)...)
}

// note adds an observation to the scenario's cell (a timing, a count).
func (e *env) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	e.cell.notes = append(e.cell.notes, s)
	e.t.Log("note: " + s)
}

// namespace creates a namespace: the real server refuses objects in one that
// does not exist.
func (e *env) namespace(name string) {
	create(e.t, e.client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// reflectorOptions are the conformance settings: client-go's figures except
// for retries, which start at 10ms so that a healed network is used at once.
func reflectorOptions(mode reflector.WatchListMode) informer.ReflectorOptions {
	return informer.ReflectorOptions{
		Backoff:   reflector.Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond},
		WatchList: mode,
	}
}

// factory builds a factory on the scenario's namespace and config; it is shut
// down when the scenario ends, before the proxy closes.
func (e *env) factory(opts informer.FactoryOptions) *informer.Factory {
	if opts.Namespace == "" {
		opts.Namespace = e.ns
	}
	if opts.Informer.Reflector.Backoff == (reflector.Backoff{}) {
		// No reflector options given: list-then-watch.
		opts.Informer.Reflector = reflectorOptions(reflector.WatchListOff)
	}
	// Fault scenarios produce errors on purpose; they are logged, and the
	// scenarios count them through Stats.
	opts.Informer.OnError = func(err error) { e.t.Logf("informer error: %v", err) }
	f := informer.NewFactory(e.cfg, opts)
	e.t.Cleanup(f.Shutdown)
	return f
}

// start starts the factories and waits until every informer has synced.
func (e *env) start(factories ...*informer.Factory) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	for _, f := range factories {
		f.Start(ctx)
	}
	wait, stop := context.WithTimeout(ctx, convergeWithin)
	defer stop()
	for _, f := range factories {
		for name, ok := range f.WaitForCacheSync(wait) {
			require.True(e.t, ok, "informer %s never synced", name)
		}
	}
}

// cell is one scenario's outcome against one server.
type cell struct {
	ok      bool
	skipped string
	step    string   // the last step begun
	notes   []string // observations worth a reader's time
}

func (c *cell) finish(ok bool) { c.ok = ok }

func (c *cell) String() string {
	switch {
	case c.skipped != "":
		return "skipped: " + c.skipped
	case !c.ok:
		return "**FAIL** during: " + c.step
	case len(c.notes) > 0:
		return "pass: " + strings.Join(c.notes, "; ")
	}
	return "pass"
}
