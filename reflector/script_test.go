package reflector_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/reflector"
)

// The scripts in testdata/ specify the reflector by what it does: the
// requests it sends, the calls it makes on its store, the errors it reports
// and the states it goes through, each stamped with the time it happened.
// testdata/README.md describes the commands. Regenerate the expected output
// with
//
//	go test ./reflector/ -run TestScripts -rewrite
//
// and read the diff: it is the change in behaviour.
//
// Each script runs in a testing/synctest bubble, so time is an input: it
// stands still while the reflector works and moves only when a script says
// "advance". The runner drives the reflector through its public API alone
// (New, Options, Run, Stats, State, OnError), so the scripts hold whatever
// its internals become.
//
// datadriven notes "still running after 10s" every 10 s a directive runs,
// on a timer that, inside the bubble, counts the bubble's time: an
// "advance 5m" earned thirty of them, and a failing script printed pages
// of them before its diff. They say nothing here (a script that hangs
// deadlocks the bubble, which synctest reports at once), so quietTB drops
// them, and a failure shows its diff and nothing else.

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			opensWithWhy(t, path)
			synctest.Test(t, func(t *testing.T) {
				s := &script{start: time.Now(), poke: make(chan struct{}, 1)}
				t.Cleanup(s.cancelAll)
				datadriven.RunTestAny(quietTB{t}, path, func(_ testing.TB, d *datadriven.TestData) string {
					return s.command(t, d)
				})
			})
		})
	}
}

// quietTB is the testing.TB datadriven is given: the test's own, less
// datadriven's "still running" notes (see above).
type quietTB struct{ testing.TB }

// stillRunning is how datadriven's notes read after the directive's
// position.
const stillRunning = ": still running after "

// Logf drops datadriven's "still running" notes and passes on the rest.
func (q quietTB) Logf(format string, args ...any) {
	q.Helper()
	if msg := fmt.Sprintf(format, args...); strings.Contains(msg, stillRunning) {
		return
	}
	q.TB.Logf(format, args...)
}

// opensWithWhy checks that a script starts by saying why its behaviour
// matters: a script without a reason is a test nobody can judge.
func opensWithWhy(t *testing.T, path string) {
	text, err := os.ReadFile(path)
	check(t, err)
	if !bytes.HasPrefix(text, []byte("# ")) {
		t.Fatalf("%s must open with a comment saying why the behaviour matters", path)
	}
}

// script is one script's world: a reflector, the server it talks to, the
// store it fills, and the log of what they did. It lives in one synctest
// bubble.
type script struct {
	start time.Time     // when the reflector was made: log stamps count from here
	poke  chan struct{} // capacity 1: a hook ran (see advance)

	r        *reflector.Reflector
	server   *server
	store    *recordingStore
	resync   atomic.Bool // what ShouldResync answers
	messages bool        // error lines end with the cause's message

	mu        sync.Mutex // guards log, state, backoffs and cancels
	log       []string
	state     reflector.State
	backoffs  int64
	cancels   []context.CancelFunc
	runsAlive sync.WaitGroup
}

// command runs one script command and returns what happened meanwhile.
func (s *script) command(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && s.r == nil {
		t.Fatalf("%s: the script must start with new", d.Pos)
	}
	switch d.Cmd {
	case "new":
		// A new reflector starts a new world: the last one is stopped
		// (and its log dropped), and the clock reads 0:00 again.
		s.cancelAll()
		s.flush()
		s.start = time.Now()
		s.newReflector(t, d)
		return "ok"
	case "run":
		s.run()
	case "cancel":
		s.cancelAll()
	case "list":
		queue(t, s.server.lists, listAnswer(t, d))
	case "watch":
		queue(t, s.server.watches, s.server.watchAnswer(t, d))
	case "send":
		s.server.newest(t).send(t, events(t, d.Input))
	case "close":
		s.server.newest(t).end(closeError(t, d))
	case "advance":
		s.advance(duration(t, firstArg(t, d)))
	case "store-fails", "store-cancels", "store-holds":
		skip := 0
		d.MaybeScanArgs(t, "after", &skip)
		s.store.plan(firstArg(t, d), strings.TrimPrefix(d.Cmd, "store-"), skip)
	case "release":
		s.store.release()
	case "should-resync":
		s.resync.Store(firstArg(t, d) == "true")
	case "stats":
		return statsLines(s.r.Stats())
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
	s.settle()
	return s.flush()
}

// newReflector builds the reflector from the command's options. Backoff
// jitter is off unless asked for, so that waits read as the ceilings they
// are; the random draws that remain (watch timeouts) come from a fixed seed.
func (s *script) newReflector(t *testing.T, d *datadriven.TestData) {
	s.server = &server{s: s, lists: make(chan listReply, 64), watches: make(chan watchReply, 64)}
	s.store = &recordingStore{s: s, next: map[string]*action{}}
	opts := reflector.Options{
		ExpectedType: &corev1.Pod{},
		OnError:      func(err error) { s.logf("%s", errorLine(err, s.messages)) },
		Tunables: reflector.Tunables{
			Backoff: reflector.Backoff{Jitter: -1},
			Rand:    rand.New(rand.NewPCG(1, 2)),
		},
	}
	noServer := false
	s.messages = false
	for _, a := range d.CmdArgs {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		switch a.Key {
		case "watchlist":
			mode, ok := map[string]reflector.WatchListMode{
				"auto": reflector.WatchListAuto, "on": reflector.WatchListOn, "off": reflector.WatchListOff}[v]
			if !ok {
				t.Fatalf("%s: watchlist=%q: want auto, on or off", d.Pos, v)
			}
			opts.WatchList = mode
		case "server-watchlist":
			s.server.watchList = v
		case "page-size":
			opts.PageSize = int64(number(t, v))
		case "max-items":
			opts.MaxListItems = number(t, v)
		case "max-pages":
			opts.MaxListPages = number(t, v)
		case "resync":
			opts.ResyncPeriod = duration(t, v)
			opts.ShouldResync = s.resync.Load
			s.resync.Store(true)
		case "bookmark-interval":
			opts.BookmarkInterval = duration(t, v)
		case "stuck-factor":
			_, err := fmt.Sscan(v, &opts.StuckWatchFactor)
			check(t, err)
		case "min-watch-timeout":
			opts.MinWatchTimeout = duration(t, v)
		case "watchlist-timeout":
			opts.WatchListTimeout = duration(t, v)
		case "jitter":
			opts.Backoff.Jitter = 0 // the default: full jitter
		case "any-type":
			opts.ExpectedType = nil
		case "unstructured":
			opts.ExpectedType = unstructuredPod()
		case "server-bytes":
			s.server.bytes = int64(number(t, v))
		case "namespace":
			s.server.scope[0] = v
		case "label-selector":
			s.server.scope[1] = v
		case "field-selector":
			s.server.scope[2] = v
		case "no-server":
			noServer = true
		case "messages":
			s.messages = true
		default:
			t.Fatalf("%s: unknown option %q", d.Pos, a.Key)
		}
	}
	lw := s.server.lw()
	if noServer {
		lw = nil
	}
	s.r = reflector.New(lw, s.store, opts)
	s.state, s.backoffs = s.r.State(), 0
}

// run starts Run on a goroutine of its own, as an informer does.
func (s *script) run() {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cancels = append(s.cancels, cancel)
	s.mu.Unlock()
	s.runsAlive.Go(func() {
		err := s.r.Run(ctx)
		s.logf("run returned %s", runResult(err))
	})
}

// cancelAll cancels every Run and waits for them to return (releasing a
// store call the script held, which knows nothing of contexts).
func (s *script) cancelAll() {
	s.cancelRuns()
	if s.store != nil {
		s.store.release()
	}
	s.runsAlive.Wait()
}

// cancelRuns cancels every Run's context, without waiting.
func (s *script) cancelRuns() {
	s.mu.Lock()
	cancels := s.cancels
	s.cancels = nil
	s.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
}

// advance lets d of time pass. Whenever the reflector does something
// meanwhile (every hook pokes), time stands still until it is blocked
// again, and its state is noted then: that is how a backoff, which waits
// without calling anything, shows in the log at the moment it began.
func (s *script) advance(d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		s.settle()
		select {
		case <-s.poke: // served by the settle above
		default:
		}
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		timer := time.NewTimer(left)
		select {
		case <-timer.C:
		case <-s.poke:
			timer.Stop()
		}
	}
}

// settle waits until the reflector is blocked (on the server, its store
// or a timer), then notes its state.
func (s *script) settle() {
	synctest.Wait()
	s.logf("")
}

// logf notes the reflector's state, if it changed, then adds a line to the
// log, both stamped with the current time. An empty format only notes the
// state. The hooks call it on the reflector's goroutine, where the state
// is the one the hook runs in.
func (s *script) logf(format string, args ...any) {
	st := s.r.Stats()
	s.mu.Lock()
	defer s.mu.Unlock()
	stamp := stampOf(time.Since(s.start))
	if st.State != s.state || st.Backoffs != s.backoffs {
		line := stamp + " state " + st.State.String()
		if st.State == reflector.StateBackingOff {
			line += fmt.Sprintf(" wait=%v", st.LastBackoff)
		}
		s.state, s.backoffs = st.State, st.Backoffs
		s.log = append(s.log, line)
	}
	if format == "" {
		return
	}
	s.log = append(s.log, stamp+" "+fmt.Sprintf(format, args...))
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// flush returns the log since the last flush.
func (s *script) flush() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.Join(compress(s.log), "\n")
	s.log = s.log[:0]
	if out == "" {
		return "(nothing)"
	}
	return out
}

// compress writes a run of minRun or more store adds at one instant as one
// line, "store add FIRST .. LAST (N calls)", so that a script can send a
// burst of events and still be read.
func compress(log []string) []string {
	const minRun = 8
	var out []string
	for i := 0; i < len(log); {
		prefix, _, _ := strings.Cut(log[i], " store add ")
		prefix += " store add "
		j := i
		for j < len(log) && strings.HasPrefix(log[j], prefix) && !strings.HasSuffix(log[j], ")") {
			j++
		}
		if j-i < minRun {
			out = append(out, log[i])
			i++
			continue
		}
		first, last := strings.TrimPrefix(log[i], prefix), strings.TrimPrefix(log[j-1], prefix)
		out = append(out, fmt.Sprintf("%s%s .. %s (%d calls)", prefix, first, last, j-i))
		i = j
	}
	return out
}

// stampOf formats a time since the start as m:ss.mmm.
func stampOf(d time.Duration) string {
	m := d / time.Minute
	d -= m * time.Minute
	return fmt.Sprintf("%d:%02d.%03d", m, d/time.Second, (d%time.Second)/time.Millisecond)
}

// sentinels are the reflector's sentinel errors a script names when an
// error wraps them: the exported ones callers test, then the unexported
// ones (export_test.go), under their own names.
var sentinels = append([]struct {
	Name string
	Err  error
}{
	{"ErrWrongType", reflector.ErrWrongType}, {"ErrNoName", reflector.ErrNoName},
	{"ErrDecode", reflector.ErrDecode}, {"ErrContinueLoop", reflector.ErrContinueLoop},
	{"ErrListTooLarge", reflector.ErrListTooLarge},
	{"ErrOutOfScope", reflector.ErrOutOfScope}, {"ErrInvalidName", reflector.ErrInvalidName},
	{"ErrAlreadyRunning", reflector.ErrAlreadyRunning}, {"ErrNotConfigured", reflector.ErrNotConfigured},
}, reflector.InternalSentinels...)

// errorLine is the one place that reads the reflector's error taxonomy:
// what it was doing, the Kind, the sentinels the error wraps, and the HTTP
// code and reason of the server's answer behind it, if any (so a script
// shows the server's error reaching OnError intact), and with messages
// the cause's own words.
func errorLine(err error, messages bool) string {
	var e *reflector.Error
	if !errors.As(err, &e) {
		return fmt.Sprintf("error, not a *reflector.Error: %v", err)
	}
	line := fmt.Sprintf("error op=%s kind=%s", e.Op, e.Kind)
	for _, s := range sentinels {
		if errors.Is(err, s.Err) {
			line += " is=" + s.Name
		}
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code != 0 {
		line += fmt.Sprintf(" code=%d reason=%s", status.Status().Code, status.Status().Reason)
	}
	if messages {
		line += fmt.Sprintf(": %v", e.Err)
	}
	return line
}

// runResult names what Run returned.
func runResult(err error) string {
	if err == nil {
		return "nil"
	}
	for _, s := range sentinels {
		if errors.Is(err, s.Err) {
			return s.Name
		}
	}
	return err.Error()
}

// statsLines prints the counters a script can check, skipping zeros.
func statsLines(st reflector.Stats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state=%s last-rv=%q\n", st.State, st.LastSyncResourceVersion)
	counters := []struct {
		name string
		n    int64
	}{
		{"lists", st.Lists}, {"list-requests", st.ListRequests}, {"watchlist-syncs", st.WatchListSyncs},
		{"relists", st.Relists}, {"watches", st.Watches}, {"resyncs", st.Resyncs}, {"backoffs", st.Backoffs},
	}
	b.WriteString("counts:")
	for _, c := range counters {
		if c.n != 0 {
			fmt.Fprintf(&b, " %s=%d", c.name, c.n)
		}
	}
	if st.LastBackoff != 0 {
		fmt.Fprintf(&b, " last-backoff=%v", st.LastBackoff)
	}
	if st.BytesDecoded != 0 {
		fmt.Fprintf(&b, " bytes-decoded=%d", st.BytesDecoded)
	}
	b.WriteString("\nevents:")
	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		if n := st.Events[typ]; n != 0 {
			fmt.Fprintf(&b, " %s=%d", typ, n)
		}
	}
	b.WriteString("\nerrors:")
	kinds := make([]reflector.Kind, 0, len(st.Errors))
	for k := range st.Errors {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, " %s=%d", k, st.Errors[k])
	}
	b.WriteString("\ntime-in:")
	for s := reflector.StateIdle; s <= reflector.StateStopped; s++ {
		if d := st.TimeIn[s]; d != 0 {
			fmt.Fprintf(&b, " %s=%v", s, d)
		}
	}
	return b.String()
}

// queue hands the server an answer for its next call.
func queue[T any](t *testing.T, answers chan T, a T) {
	select {
	case answers <- a:
	default:
		t.Fatalf("%d answers queued already", cap(answers))
	}
}

// firstArg is a command's one bare argument, as in "advance 5s".
func firstArg(t *testing.T, d *datadriven.TestData) string {
	if len(d.CmdArgs) == 0 {
		t.Fatalf("%s: %s needs an argument", d.Pos, d.Cmd)
	}
	return d.CmdArgs[0].Key
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func duration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	check(t, err)
	return d
}

func number(t *testing.T, s string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscan(s, &n)
	check(t, err)
	return n
}

// logRecorder passes t on and keeps what was logged through it.
type logRecorder struct {
	testing.TB
	logged *[]string
}

func (r logRecorder) Logf(format string, args ...any) {
	r.Helper()
	*r.logged = append(*r.logged, fmt.Sprintf(format, args...))
	r.TB.Logf(format, args...)
}

// A script whose directives let minutes pass logs nothing but its own
// lines: before quietTB, datadriven noted "still running" every 10 s of
// the bubble's time (here 12 notes), and a failing script showed them all
// before its diff.
func TestScriptsDoNotNoteBubbleTimeAsStillRunning(t *testing.T) {
	const text = `new watchlist=off
----
ok

run
----
0:00.000 state Listing
0:00.000 list rv="0" limit=500

list rv=10
----
0:00.000 store replace rv="10" []
0:00.000 state Watching
0:00.000 watch rv="10" bookmarks timeout=502s

watch
----
(nothing)

advance 2m
----
(nothing)
`
	var logged []string
	synctest.Test(t, func(t *testing.T) {
		s := &script{start: time.Now(), poke: make(chan struct{}, 1)}
		t.Cleanup(s.cancelAll)
		datadriven.RunTestFromStringAny(quietTB{logRecorder{t, &logged}}, text, func(_ testing.TB, d *datadriven.TestData) string {
			return s.command(t, d)
		})
	})
	for _, line := range logged {
		if strings.Contains(line, stillRunning) {
			t.Errorf("logged %q", line)
		}
	}
}
