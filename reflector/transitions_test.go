package reflector

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// Tests of the machine's step: each feeds one input to one state and
// checks the state that follows. No I/O, no goroutine, no clock.

// describe names a state the way the tests compare them.
func describe(s state) string {
	switch s := s.(type) {
	case listing:
		out := s.public().String()
		switch s.via {
		case viaPaged:
			out += " paged"
		case viaUnpaged:
			out += " unpaged"
		}
		if s.consistent {
			out += " (consistent)"
		}
		return out
	case watching:
		return "Watching from " + s.rv
	case backingOff:
		return "backoff then " + describe(s.then)
	case stopped:
		return "Stopped"
	case idle:
		return "Idle"
	}
	return "?"
}

// testMachine is a machine with default backoffs and a fixed draw.
func testMachine(synced bool) *machine {
	return &machine{
		synced:        synced,
		backoff:       backoffState{cfg: Backoff{}.withDefaults()},
		draw:          func() float64 { return 0.5 },
		autoWatchList: true,
	}
}

// failure is a failure of op, of the given kind, as its input: for a
// list, one that asked for rv.
func failure(op string, kind Kind, rv string) input {
	f := fault{kind: kind, now: time.Unix(1, 0)}
	switch op {
	case opList:
		return listFailed{fault: f, rv: rv}
	case opWatchList:
		return watchListFailed{f}
	case opStore:
		return storeFailed{f}
	}
	return watchFailed{f}
}

// onLaterPage is a list's failure on a page after the first.
func onLaterPage(in input) input {
	l := in.(listFailed)
	l.laterPage = true
	return l
}

// withErr is a failure carrying err.
func withErr(in input, err error) input {
	switch in := in.(type) {
	case listFailed:
		in.err = err
		return in
	case watchListFailed:
		in.err = err
		return in
	case storeFailed:
		in.err = err
		return in
	case watchFailed:
		in.err = err
		return in
	}
	return in
}

func TestListFailures(t *testing.T) {
	tests := []struct {
		name   string
		kind   Kind
		rv     string // asked for
		synced bool
		want   string
	}{
		{"410 on the first list: consistent read at once", KindExpired, "0", false, "Listing (consistent)"},
		{"410 on a relist at RV: consistent read at once", KindExpired, "42", true, "Relisting (consistent)"},
		{"too large RV: consistent read at once", KindTooLargeRV, "42", true, "Relisting (consistent)"},
		{"410 on a consistent read: back off", KindExpired, "", true, "backoff then Relisting (consistent)"},
		{"429: back off, same RV", KindThrottled, "42", true, "backoff then Relisting"},
		{"network: back off", KindNetwork, "0", false, "backoff then Listing"},
		{"5xx: back off", KindServerError, "42", true, "backoff then Relisting"},
		{"forbidden: back off", KindRejected, "0", false, "backoff then Listing"},
		{"malformed: back off", KindDecode, "0", false, "backoff then Listing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := listing{rv: "42", relist: tt.synced, consistent: tt.rv == ""}
			if !tt.synced {
				s.rv = ""
			}
			got := testMachine(tt.synced).step(s, failure(opList, tt.kind, tt.rv))
			assert.Equal(t, tt.want, describe(got))
		})
	}
}

func TestListFailureOnALaterPage(t *testing.T) {
	m := testMachine(true)
	s := listing{rv: "42", relist: true}
	in := onLaterPage(failure(opList, KindExpired, "0"))
	got := m.step(s, in)
	assert.Equal(t, "Relisting unpaged", describe(got), "continue token expired: the same list, unpaged, at once")
	assert.Equal(t, "42", got.(listing).rv)

	// The unpaged list failing with 410 is a list at RV failing.
	assert.Equal(t, "Relisting (consistent)", describe(m.step(got, failure(opList, KindExpired, "42"))))
	// Other failures on a later page are a list's failures.
	in = onLaterPage(failure(opList, KindNetwork, "42"))
	assert.Equal(t, "backoff then Relisting", describe(m.step(s, in)))
}

func TestWatchEnds(t *testing.T) {
	tests := []struct {
		name string
		in   input
		want string
	}{
		{"normal close (server timeout): re-watch at once", watchClosed{}, "Watching from 42"},
		{"watchdog: re-watch at once", failure(opWatch, KindStuckWatch, ""), "Watching from 42"},
		{"410: relist", failure(opWatch, KindExpired, ""), "backoff then Relisting"},
		{"too large RV: relist", failure(opWatch, KindTooLargeRV, ""), "backoff then Relisting"},
		{"429: back off, re-watch", failure(opWatch, KindThrottled, ""), "backoff then Watching from 42"},
		{"connection refused: back off, re-watch", failure(opWatch, KindNetwork, ""), "backoff then Watching from 42"},
		{"5xx: back off, re-watch", failure(opWatch, KindServerError, ""), "backoff then Watching from 42"},
		{"403: back off, re-watch", failure(opWatch, KindRejected, ""), "backoff then Watching from 42"},
		{"refused frame: relist, past it", failure(opWatch, KindDecode, ""), "backoff then Relisting"},
		{"short watch: back off, re-watch", failure(opWatch, KindShortWatch, ""), "backoff then Watching from 42"},
		{"RV went backwards: relist from the last good RV", failure(opWatch, KindRVBackwards, ""), "backoff then Relisting"},
		{"StorageReadError: consistent relist", failure(opWatch, KindStoreRead, ""), "backoff then Relisting (consistent)"},
		{"the store failed a resync: relist", failure(opStore, KindStore, ""), "backoff then Relisting"},
		{"unknown: back off, re-watch", failure(opWatch, KindOther, ""), "backoff then Watching from 42"},
		{"404, resource not served: probe, then a consistent relist", failure(opWatch, KindNotServed, ""), "backoff then Relisting (consistent)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testMachine(true).step(watching{rv: "42"}, tt.in)
			assert.Equal(t, tt.want, describe(got))
		})
	}
}

func TestRelistsKeepTheLastGoodRV(t *testing.T) {
	m := testMachine(true)
	got := m.step(watching{rv: "42"}, failure(opWatch, KindRVBackwards, ""))
	assert.Equal(t, listing{rv: "42", relist: true}, got.(backingOff).then)
	got = m.step(watching{rv: "42"}, failure(opWatch, KindStoreRead, ""))
	assert.Equal(t, listing{rv: "42", relist: true, consistent: true}, got.(backingOff).then)
}

// TestResyncFailureWhileBackingOff: a resync served during a wait fails;
// what follows the wait is a relist, whatever the wait led to, after a
// new (longer) backoff.
func TestResyncFailureWhileBackingOff(t *testing.T) {
	tests := []struct {
		name string
		then state
		want listing
	}{
		{"a wait before a watch", watching{rv: "42"}, listing{rv: "42", relist: true}},
		{"a wait before a consistent relist", listing{relist: true, consistent: true, via: viaPaged}, listing{relist: true, consistent: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testMachine(true)
			first := m.step(watching{rv: "42"}, failure(opWatch, KindNetwork, "")).(backingOff)
			got := m.step(backingOff{then: tt.then, delay: first.delay}, failure(opStore, KindStore, ""))
			b, ok := got.(backingOff)
			require.True(t, ok, describe(got))
			assert.Equal(t, tt.want, b.then)
			assert.Greater(t, b.delay, first.delay, "the backoff grows")
		})
	}
}

func TestResumable(t *testing.T) {
	tests := []struct {
		name string
		rv   string // where the store is
		in   input
		want string
	}{
		{"a real position: re-watch", "42", watchClosed{}, "Watching from 42"},
		{"a real position, after backoff", "42", failure(opWatch, KindNetwork, ""), "backoff then Watching from 42"},
		{"position 0 (empty server's bookmark): relist", "0", watchClosed{}, "Relisting"},
		{"no position: relist, keeping the backoff", "", failure(opWatch, KindNetwork, ""), "backoff then Relisting"},
		{"already a relist", "0", failure(opWatch, KindExpired, ""), "backoff then Relisting"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testMachine(true).step(watching{rv: tt.rv}, tt.in)
			assert.Equal(t, tt.want, describe(got))
		})
	}
}

func TestWatchListFailures(t *testing.T) {
	tests := []struct {
		kind   Kind
		synced bool
		want   string
	}{
		{KindWatchListTimeout, false, "Listing paged"},
		{KindRejected, false, "Listing paged"},
		{KindDecode, true, "Relisting paged"},
		{KindExpired, true, "Relisting paged (consistent)"},
		{KindTooLargeRV, true, "Relisting paged (consistent)"},
		{KindThrottled, false, "backoff then Listing"},
		{KindNetwork, true, "backoff then Relisting"},
		{KindServerError, false, "backoff then Listing"},
		{KindStoreRead, true, "backoff then Relisting"},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			s := listing{rv: "42", relist: tt.synced}
			got := testMachine(tt.synced).step(s, failure(opWatchList, tt.kind, "42"))
			assert.Equal(t, tt.want, describe(got))
		})
	}
}

func TestWatchListRefusalIsRemembered(t *testing.T) {
	m := testMachine(false)
	in := failure(opWatchList, KindWatchListTimeout, "")
	m.step(listing{}, withErr(in, errWatchListTimeout))
	assert.True(t, m.watchListRefused)

	m = testMachine(false)
	m.step(listing{}, withErr(in, apierrors.NewTooManyRequests("slow down", 1)))
	assert.False(t, m.watchListRefused, "a passing failure is no refusal")

	m = testMachine(false)
	m.autoWatchList = false
	m.step(listing{}, withErr(in, errWatchListTimeout))
	assert.False(t, m.watchListRefused, "WatchListOn keeps trying")
}

func TestSnapshotStored(t *testing.T) {
	m := testMachine(false)
	w := watch.NewFake()
	got := m.step(listing{via: viaPaged}, snapshotStored{rv: "7", stream: w})
	assert.Equal(t, watching{rv: "7", stream: w}, got, "the WatchList's stream carries on")
	assert.True(t, m.synced)
	assert.False(t, m.paginatedBefore)

	got = m.step(listing{}, snapshotStored{rv: "9", paged: true})
	assert.Equal(t, watching{rv: "9"}, got)
	assert.True(t, m.paginatedBefore)
}

func TestBackoffCarriesTheState(t *testing.T) {
	m := testMachine(true)
	in := withErr(failure(opWatch, KindThrottled, ""), apierrors.NewTooManyRequests("slow down", 7))
	got := m.step(watching{rv: "42"}, in)
	b, ok := got.(backingOff)
	require.True(t, ok, describe(got))
	assert.Equal(t, 7*time.Second, b.delay, "Retry-After is a floor on the wait")
	assert.Equal(t, watching{rv: "42"}, m.step(b, waitOver{}), "time is up: the state it leads to")

	l := listing{rv: "42", relist: true, consistent: true, via: viaPaged}
	got = m.step(l, failure(opList, KindNetwork, ""))
	assert.Equal(t, listing{rv: "42", relist: true, consistent: true}, got.(backingOff).then,
		"a retried listing keeps its consistent read, and tries WatchList again")
}

func TestStopAndStart(t *testing.T) {
	m := testMachine(false)
	assert.Equal(t, listing{}, m.start(), "first Run: the first listing")

	m.synced = true
	m.state = m.step(backingOff{then: watching{rv: "42"}}, ctxDone{})
	assert.Equal(t, stopped{resume: watching{rv: "42"}}, m.state, "a stop remembers where the wait led")
	assert.Equal(t, watching{rv: "42"}, m.start(), "a later Run resumes the watch")

	m.state = stopped{resume: watching{rv: "0"}}
	assert.Equal(t, listing{rv: "0", relist: true}, m.start(), "no position to resume from: relist")

	m.state = m.step(listing{rv: "42", relist: true, consistent: true, via: viaUnpaged}, ctxDone{})
	assert.Equal(t, listing{rv: "42", relist: true, consistent: true}, m.start(), "a stopped relist is picked up")
}

// TestEveryInputHasARow feeds every kind of input, in every state, to the
// table: none may fall through it.
func TestEveryInputHasARow(t *testing.T) {
	states := []state{idle{}, stopped{resume: watching{rv: "1"}}, listing{}, watching{rv: "1"}, backingOff{then: listing{}}}
	ops := []string{opList, opWatchList, opWatch, opStore}
	for _, s := range states {
		ins := []input{runStarted{}, snapshotStored{}, watchClosed{}, waitOver{}, ctxDone{}}
		for _, op := range ops {
			for k := range Kind(numKinds) {
				for _, rv := range []string{"", "1"} {
					ins = append(ins, failure(op, k, rv))
				}
			}
		}
		for _, in := range ins {
			if !expected(s, in) {
				continue
			}
			found := false
			for _, tr := range transitions {
				found = found || tr.matches(phaseOf(s), s, in)
			}
			assert.True(t, found, "no row for %s in %s", describe(s), inputString(in))
		}
	}
}

// expected reports whether the I/O of s, or Run in s, can produce in.
func expected(s state, in input) bool {
	switch s.(type) {
	case idle, stopped:
		return in.on() == onRunStarted
	case listing:
		switch in.(type) {
		case snapshotStored, ctxDone, listFailed, watchListFailed, storeFailed:
			return true
		}
	case watching:
		switch in.(type) {
		case watchClosed, ctxDone, watchFailed, storeFailed:
			return true
		}
	case backingOff:
		switch in.(type) {
		case waitOver, ctxDone, storeFailed:
			return true
		}
	}
	return false
}

func inputString(in input) string {
	f, _ := faultOf(in)
	l, _ := in.(listFailed)
	return fmt.Sprintf("%T %s %s", in, f.kind, l.rv)
}

// TestTransitionTableMatchesDoc renders the table the machine runs on and
// compares it with the table in doc.go: the documentation is the code's
// own table. With -rewrite it writes the rendered table into doc.go.
func TestTransitionTableMatchesDoc(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(src), docTableStart)
	require.True(t, ok, "doc.go has no table (%q)", docTableStart)
	end := strings.Index(rest, "\n//\n")
	require.Positive(t, end, "doc.go's table ends with an empty comment line")
	want := renderTable()
	if rest[:end+1] == want {
		return
	}
	if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
		require.NoError(t, os.WriteFile("doc.go", []byte(before+docTableStart+want+rest[end+1:]), 0o644))
		return
	}
	t.Errorf("doc.go's table is not the transition table (go test -run %s -rewrite):\n%s", t.Name(), want)
}

// docTableStart is the line before doc.go's table.
const docTableStart = "// The table, row by row:\n//\n"

// renderTable is doc.go's table as the rows give it: a header, a rule,
// and one line a row, in columns two spaces apart.
func renderTable() string {
	rows := [][3]string{{"state", "what happened", "next state"}, {}}
	for _, tr := range transitions {
		rows = append(rows, [3]string{tr.in.String(), tr.outcome, tr.then.String()})
	}
	var w [3]int
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c))
		}
	}
	rows[1] = [3]string{strings.Repeat("-", w[0]), strings.Repeat("-", w[1]), strings.Repeat("-", w[2])}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "//\t%-*s  %-*s  %s\n", w[0], r[0], w[1], r[1], r[2])
	}
	return b.String()
}

// TestUnmatchedInputCarriesOn checks decide's answer to an input no row
// matches (none does today): the reflector must neither loop nor stop.
func TestUnmatchedInputCarriesOn(t *testing.T) {
	odd := waitOver{}
	assert.Equal(t, toBackoffList, decide(listing{}, odd).then)
	assert.Equal(t, toBackoffWatch, decide(watching{rv: "1"}, odd).then)
	assert.Equal(t, toResume, decide(backingOff{then: listing{}}, watchClosed{}).then)
}

// TestReadmeMapsEveryRow checks testdata/README.md's map from the rows of
// the transition table to the scripts that show them: the same rows in the same
// order, each naming at least one script that exists.
func TestReadmeMapsEveryRow(t *testing.T) {
	b, err := os.ReadFile("testdata/README.md")
	require.NoError(t, err)
	var got [][2]string
	scripts := regexp.MustCompile("`([a-z_]+\\.txt)`")
	for _, line := range strings.Split(string(b), "\n") {
		c := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
		if len(c) != 5 || !strings.Contains(c[3], ".txt`") { // not a row of the map

			continue
		}
		got = append(got, [2]string{strings.TrimSpace(c[1]), strings.ReplaceAll(strings.TrimSpace(c[2]), "\x00", "|")})
		names := scripts.FindAllStringSubmatch(c[3], -1)
		require.NotEmpty(t, names, "README row %q names no script", line)
		for _, n := range names {
			assert.FileExists(t, "testdata/"+n[1], "README row %q", line)
		}
	}
	var want [][2]string
	for _, tr := range transitions {
		want = append(want, [2]string{tr.in.String(), tr.outcome})
	}
	assert.Equal(t, want, got)
}
