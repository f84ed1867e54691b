package processor

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResyncStep(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		now      time.Time
		next     time.Time
		period   time.Duration
		wantDue  bool
		wantNext time.Time
	}{
		{"no period is never due", t0.Add(time.Hour), t0, 0, false, t0},
		{"before the deadline", t0.Add(999 * time.Millisecond), t0.Add(time.Second), time.Second, false, t0.Add(time.Second)},
		{"at the deadline", t0.Add(time.Second), t0.Add(time.Second), time.Second, true, t0.Add(2 * time.Second)},
		{"late: next counts from now", t0.Add(1500 * time.Millisecond), t0.Add(time.Second), time.Second, true, t0.Add(2500 * time.Millisecond)},
		{"stalled: no catch-up burst", t0.Add(10 * time.Second), t0.Add(time.Second), time.Second, true, t0.Add(11 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			due, next := resyncStep(tt.now, tt.next, tt.period)
			assert.Equal(t, tt.wantDue, due)
			assert.Equal(t, tt.wantNext, next)
		})
	}
}

func TestNormalizedResync(t *testing.T) {
	tests := []struct {
		in      time.Duration
		want    time.Duration
		wantErr bool
	}{
		{0, 0, false},
		{time.Nanosecond, MinResyncPeriod, false},
		{999 * time.Millisecond, MinResyncPeriod, false},
		{time.Second, time.Second, false},
		{time.Minute, time.Minute, false},
		{-time.Second, 0, true},
	}
	for _, tt := range tests {
		got, err := normalizedResync(tt.in)
		if tt.wantErr {
			assert.ErrorIs(t, err, ErrNegativeResyncPeriod, "in=%v", tt.in)
			continue
		}
		assert.NoError(t, err)
		assert.Equal(t, tt.want, got, "in=%v", tt.in)
	}
}

// TestResyncReachesOnlyDueHandlers drives resync rounds in a synctest
// bubble, where time moves only when the test sleeps, and checks, round by
// round, which handlers a sync notification reaches.
func TestResyncReachesOnlyDueHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		periods := map[string]time.Duration{
			"every-1s": time.Second,
			"every-3s": 3 * time.Second,
			"never":    0,
			"raised":   200 * time.Millisecond, // behaves as 1s
		}
		names := []string{"every-1s", "every-3s", "never", "raised"}
		recs := map[string]*recorder{}
		for _, name := range names {
			recs[name] = newRecorder()
			_, err := p.AddHandler(recs[name], HandlerOptions{Name: name, ResyncPeriod: periods[name]}, nil)
			require.NoError(t, err)
		}
		require.Equal(t, time.Second, p.ResyncInterval())
		startProcessor(t, p)

		rounds := []struct {
			advance time.Duration
			want    []string // handlers that must get the sync notification
		}{
			{500 * time.Millisecond, nil}, // "raised" would be due here with 200ms
			{500 * time.Millisecond, []string{"every-1s", "raised"}},
			{time.Second, []string{"every-1s", "raised"}},
			{time.Second, []string{"every-1s", "every-3s", "raised"}},
			{500 * time.Millisecond, nil},
			{2500 * time.Millisecond, []string{"every-1s", "every-3s", "raised"}},
			{5 * time.Second, []string{"every-1s", "every-3s", "raised"}}, // stalled: each due once
		}
		for i, round := range rounds {
			time.Sleep(round.advance)
			anyDue := p.ShouldResync(time.Now())
			assert.Equal(t, len(round.want) > 0, anyDue, "round %d", i)

			obj := pod("ns", "a")
			p.Distribute(Notification{Type: Update, Key: "ns/a", Object: obj, Old: obj}, true)
			p.Distribute(addOf("ns", fmt.Sprintf("barrier-%d", i)), false) // reaches everyone
			var got []string
			for _, name := range names {
				if recs[name].next(t).Key == "ns/a" {
					got = append(got, name)
					require.Equal(t, fmt.Sprintf("ns/barrier-%d", i), recs[name].next(t).Key)
				}
			}
			assert.Equal(t, round.want, got, "round %d", i)
		}
	})
}

// TestResyncMarksLastUntilNextRound checks that all sync notifications of a
// round (a whole resync or relist) reach the due handlers, that a handler
// added mid-round is not due, and that the next round clears the marks.
func TestResyncMarksLastUntilNextRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		a := newRecorder()
		_, err := p.AddHandler(a, HandlerOptions{ResyncPeriod: time.Second}, nil)
		require.NoError(t, err)
		startProcessor(t, p)

		time.Sleep(time.Second)
		require.True(t, p.ShouldResync(time.Now()))
		b := newRecorder()
		_, err = p.AddHandler(b, HandlerOptions{ResyncPeriod: time.Second}, nil)
		require.NoError(t, err)
		for _, name := range []string{"x", "y", "z"} {
			p.Distribute(addOf("ns", name), true)
		}
		require.Equal(t, []string{"ns/x", "ns/y", "ns/z"}, a.nextKeys(t, 3))

		require.False(t, p.ShouldResync(time.Now()), "a's next resync is a second away, b's too")
		p.Distribute(addOf("ns", "after"), true)
		p.Distribute(addOf("ns", "barrier"), false)
		for _, r := range []*recorder{a, b} {
			require.Equal(t, "ns/barrier", r.next(t).Key, "no handler is due any more")
		}
	})
}

func TestResyncIntervalFollowsHandlers(t *testing.T) {
	p := New(Options{})
	require.Zero(t, p.ResyncInterval())
	slow, err := p.AddHandler(newRecorder(), HandlerOptions{ResyncPeriod: time.Minute}, nil)
	require.NoError(t, err)
	fast, err := p.AddHandler(newRecorder(), HandlerOptions{ResyncPeriod: 10 * time.Second}, nil)
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, p.ResyncInterval())
	waitClosed(t, fast.Remove(), "removal")
	require.Equal(t, time.Minute, p.ResyncInterval())
	waitClosed(t, slow.Remove(), "removal")
	require.Zero(t, p.ResyncInterval())
	require.False(t, slices.Contains(*p.regs.Load(), slow))
}

// TestNoResyncRoundWithoutAPeriod: with no handler that wants resyncs, a
// tick starts no round and leaves the last round's due set in force, so a
// sync notification still queued from that round keeps its addressees.
func TestNoResyncRoundWithoutAPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		_, err := p.AddHandler(newRecorder(), HandlerOptions{}, nil)
		require.NoError(t, err)
		time.Sleep(time.Hour)
		require.False(t, p.ShouldResync(time.Now()))

		periodic, err := p.AddHandler(newRecorder(), HandlerOptions{ResyncPeriod: time.Second}, nil)
		require.NoError(t, err)
		time.Sleep(time.Second)
		require.True(t, p.ShouldResync(time.Now()))
		round := p.due.Load()
		waitClosed(t, periodic.Remove(), "removal")
		time.Sleep(time.Second)
		require.False(t, p.ShouldResync(time.Now()))
		require.Same(t, round, p.due.Load(), "a tick without periodic handlers replaced the round")
	})
}

// TestResyncRoundIsFixedWhenDistributed checks that whether a handler gets a
// resync notification is decided when the notification is distributed, by
// the round in force then, and not when the handler gets to it: a handler
// stuck behind reads an earlier round's notifications after a later round
// has started.
func TestResyncRoundIsFixedWhenDistributed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		behind, other := newGate(t), newRecorder()
		_, err := p.AddHandler(behind, HandlerOptions{Name: "behind", ResyncPeriod: time.Second}, nil)
		require.NoError(t, err)
		_, err = p.AddHandler(other, HandlerOptions{Name: "other", ResyncPeriod: 3 * time.Second}, nil)
		require.NoError(t, err)
		startProcessor(t, p)
		p.Distribute(addOf("ns", "first"), false)
		got := []string{behind.waitEntered(t).Key} // stuck until released

		time.Sleep(time.Second) // t=1s: behind is due, other is not
		require.True(t, p.ShouldResync(time.Now()))
		p.Distribute(addOf("ns", "round-1"), true)
		time.Sleep(2 * time.Second) // t=3s: other is due, and behind again
		require.True(t, p.ShouldResync(time.Now()))
		p.Distribute(addOf("ns", "round-2"), true)
		time.Sleep(time.Second / 2) // t=3.5s: nobody is due
		require.False(t, p.ShouldResync(time.Now()))
		p.Distribute(addOf("ns", "round-3"), true)
		p.Distribute(addOf("ns", "last"), false)

		assert.Equal(t, []string{"ns/first", "ns/round-2", "ns/last"}, other.nextKeys(t, 3))
		close(behind.release)
		for range 3 {
			got = append(got, behind.waitEntered(t).Key)
		}
		assert.Equal(t, []string{"ns/first", "ns/round-1", "ns/round-2", "ns/last"}, got)
	})
}
