package informer_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

// The tours in docs/ (tour.md, tour-relist.md) walk numbered steps. Each is
// backed by a test whose steps are subtests with the same names, run in
// order against one informer, and each observed output block in the page
// (a fenced block right after "<!-- observed: step N -->") must be exactly
// what the test observed at that step. So the text cannot drift from what
// the code does: rename a section, change an observed line, or change the
// behaviour, and the test fails.

// tourStep is one numbered section of a tour and the code that performs it.
// It returns the lines the page quotes for that step, if any.
type tourStep struct {
	name string
	run  func(t *testing.T) []string
}

// runTour runs the steps in order, stopping at the first that fails (later
// steps build on it), and checks page against them.
func runTour(t *testing.T, page string, steps []tourStep) {
	t.Helper()
	observed := map[string][]string{}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			observed[s.name] = s.run(t)
			t.Logf("observed:\n%s", strings.Join(observed[s.name], "\n"))
		})
		if !ok {
			t.FailNow()
		}
	}
	checkTourPage(t, page, steps, observed)
}

var (
	tourHeading  = regexp.MustCompile(`(?m)^## (\d+\. .*)$`)
	observedMark = regexp.MustCompile("(?s)<!-- observed: step (\\d+) -->\\s*```text\\n(.*?)```")
)

// checkTourPage requires the page's numbered headings to be the steps' names,
// in order, and each observed block to equal what its step observed.
func checkTourPage(t *testing.T, page string, steps []tourStep, observed map[string][]string) {
	t.Helper()
	text, err := os.ReadFile(page)
	require.NoError(t, err)
	var headings, names []string
	for _, m := range tourHeading.FindAllStringSubmatch(string(text), -1) {
		headings = append(headings, m[1])
	}
	for _, s := range steps {
		names = append(names, s.name)
	}
	require.Equal(t, names, headings, "%s: the numbered sections must be the test's steps", page)
	quoted := map[string]bool{}
	for _, m := range observedMark.FindAllStringSubmatch(string(text), -1) {
		var n int
		_, err := fmt.Sscan(m[1], &n)
		require.NoError(t, err)
		require.True(t, n >= 1 && n <= len(steps), "%s: observed block for step %d", page, n)
		name := steps[n-1].name
		want := strings.Join(observed[name], "\n") + "\n"
		require.Equal(t, want, m[2], "%s: the output quoted for step %d is not what the test observed", page, n)
		quoted[name] = true
	}
	for _, s := range steps {
		if len(observed[s.name]) > 0 {
			require.True(t, quoted[s.name], "%s: step %q observed output the page does not quote", page, s.name)
		}
	}
}

// tourSignal lets a step wait for what it expects without polling: every
// source of news (a request recorded, a handler called, an error reported)
// notifies it, and until re-checks its condition on each notification,
// with a deadline. A notification sent while nobody waits is kept (one is
// enough: the condition is re-checked in full).
type tourSignal chan struct{}

func newTourSignal() tourSignal { return make(tourSignal, 1) }

// notify wakes a waiter, if any, or the next one.
func (s tourSignal) notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// until returns once cond holds, checked now and after each notification,
// and fails the test if it does not within waitFor.
func (s tourSignal) until(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-s:
		case <-deadline.C:
			require.FailNow(t, "timed out waiting: "+msg)
		}
	}
}

// requestLog is a ListerWatcher that writes down every request the reflector
// makes, so that a tour can quote them. It embeds the real HTTP client, so
// the reflector sees the same capabilities (WatchList support).
type requestLog struct {
	*wire.ListerWatcher
	mu    sync.Mutex // guards lines and last
	lines []string
	last  string     // the last line recorded, taken or not
	news  tourSignal // notified after each line recorded; nil for none
}

func (l *requestLog) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := l.ListerWatcher.List(ctx, opts)
	l.record(fmt.Sprintf("list  rv=%q limit=%d", opts.ResourceVersion, opts.Limit), err)
	return obj, err
}

func (l *requestLog) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.ListerWatcher.Watch(ctx, opts)
	kind := "watch"
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		kind = "watchlist"
	}
	l.record(fmt.Sprintf("%s rv=%q", kind, opts.ResourceVersion), err)
	return w, err
}

// record adds one line, dropping a repeat of the last one: how often a retry
// loop runs depends on timing; what it retries does not.
func (l *requestLog) record(req string, err error) {
	line := req + " -> accepted"
	if err != nil {
		line = req + " -> " + reflector.KindOf(err).String()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if line == l.last {
		return
	}
	l.last = line
	l.lines = append(l.lines, line)
	if l.news != nil {
		l.news.notify()
	}
}

// take returns the lines recorded since the last take.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// waitThrough waits until a line containing s is recorded, and returns the
// lines recorded since the last take up to it; the rest stay for the next
// take.
func (l *requestLog) waitThrough(t *testing.T, s, msg string) []string {
	t.Helper()
	var out []string
	l.news.until(t, func() bool {
		lines, ok := l.takeThrough(s)
		out = append(out, lines...)
		return ok
	}, msg)
	return out
}

// takeThrough returns the lines recorded since the last take up to the first
// that contains s, and whether there is one; the rest stay for the next take.
func (l *requestLog) takeThrough(s string) ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, line := range l.lines {
		if strings.Contains(line, s) {
			out := l.lines[: i+1 : i+1]
			l.lines = l.lines[i+1:]
			return out, true
		}
	}
	return nil, false
}

// recordingFactory returns factory options whose pod informer talks through
// a requestLog, and the log.
func recordingFactory(t *testing.T, host string, opts informer.FactoryOptions, news tourSignal) (informer.FactoryOptions, *requestLog) {
	t.Helper()
	log := &requestLog{news: news}
	opts.ListerWatcher = func(r informer.Resource, metadataOnly bool) (reflector.ListerWatcher, error) {
		rc, err := rest.New(rest.Config{Host: host})
		if err != nil {
			return nil, err
		}
		lw, err := wire.New(rc, r, wire.Options{Namespace: opts.Namespace})
		log.ListerWatcher = lw
		return log, err
	}
	return opts, log
}
