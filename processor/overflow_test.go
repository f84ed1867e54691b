package processor

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// versioned is an Update of key ns/name from version old to version v, as
// the informer distributes it.
func versioned(name string, old, v int) Notification {
	obj := pod("ns", name)
	obj.ResourceVersion = strconv.Itoa(v)
	was := pod("ns", name)
	was.ResourceVersion = strconv.Itoa(old)
	return Notification{Type: Update, Key: "ns/" + name, Object: obj, Old: was}
}

func rvOf(n Notification) string { return n.Object.(*corev1.Pod).ResourceVersion }

// collect reads k notifications a gate let through.
func collect(t *testing.T, g *gate, k int) []Notification {
	t.Helper()
	out := make([]Notification, 0, k)
	for range k {
		out = append(out, g.waitEntered(t))
	}
	return out
}

// One stuck handler, 20k updates to 5 pods: the backlog stops at its limit
// plus a page in the journal and one notification per key, and once the
// handler moves again it is told the newest version of each pod, each
// Update starting from the version it last saw.
func TestStuckHandlerBacklogIsBoundedByKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		g := newGate(t)
		reg, err := p.AddHandler(g, HandlerOptions{}, nil)
		require.NoError(t, err)
		startProcessor(t, p)

		const updates, pods = 20_000, 5
		for i := range updates {
			p.Distribute(versioned(fmt.Sprint(i%pods), i+1-pods, i+1), false)
			if i == 0 {
				g.waitEntered(t) // stuck in the first one from now on
			}
		}
		st := reg.Stats()
		require.True(t, st.Coalescing, "%+v", st)
		bound := DefaultBacklogLimit + pageLen + pods
		require.LessOrEqual(t, st.Pending, bound, "%+v", st)
		require.LessOrEqual(t, st.BufferCapacity, DefaultBacklogLimit+2*pageLen, "journal pages kept: %+v", st)
		require.EqualValues(t, updates-st.Pending, st.Coalesced, "every notification is pending or merged: %+v", st)

		// Let it go: the journal part comes unmerged, then one Update per pod.
		close(g.release)
		got := collect(t, g, st.Pending-1) // the first is the one it is stuck in
		seen := map[string]string{}
		for _, n := range got {
			if old, ok := seen[n.Key]; ok {
				require.Equal(t, old, n.Old.(*corev1.Pod).ResourceVersion, "%s: Old is the version last delivered", n.Key)
			}
			seen[n.Key] = rvOf(n)
		}
		for k := range pods {
			assert.Equal(t, strconv.Itoa(updates-pods+k+1), seen["ns/"+fmt.Sprint(k)], "pod %d ends at its newest version", k)
		}
		synctest.Wait() // the handler is idle: it was told everything
		caughtUp := reg.Stats()
		require.False(t, caughtUp.Coalescing, "%+v", caughtUp)
		require.Zero(t, caughtUp.Pending, "%+v", caughtUp)

		// Back on the journal: nothing is merged any more.
		p.Distribute(versioned("0", updates-pods+1, updates+1), false)
		p.Distribute(versioned("0", updates+1, updates+2), false)
		assert.Equal(t, []string{strconv.Itoa(updates + 1), strconv.Itoa(updates + 2)}, rvsOf(collect(t, g, 2)))
		assert.Equal(t, st.Coalesced, reg.Stats().Coalesced)
	})
}

// step lets the handler finish the notification it is in and returns the
// next one it starts.
func step(t *testing.T, g *gate) Notification {
	t.Helper()
	g.open(t, 1)
	return g.waitEntered(t)
}

func rvsOf(ns []Notification) []string {
	var out []string
	for _, n := range ns {
		out = append(out, rvOf(n))
	}
	return out
}

// backloggedHandler starts a processor with one gated handler of
// BacklogLimit 1 (and opts' other fields) and switches it to its backlog
// (switchToBacklog), returning all of it and how many were distributed.
func backloggedHandler(t *testing.T, opts HandlerOptions) (*Processor, *gate, *Registration, int) {
	t.Helper()
	p := New(Options{})
	g := newGate(t)
	opts.BacklogLimit = 1
	reg, err := p.AddHandler(g, opts, nil)
	require.NoError(t, err)
	startProcessor(t, p)
	return p, g, reg, switchToBacklog(t, p, g, reg)
}

// switchToBacklog makes the handler behind g, which is stuck in its first
// notification, coalesce: it fills a page and a bit of the journal with
// notifications of keys f-0, f-1, ..., more than a BacklogLimit of 1 allows.
// It returns how many it distributed.
func switchToBacklog(t *testing.T, p *Processor, g *gate, reg *Registration) int {
	t.Helper()
	p.Distribute(addOf("ns", "f-0"), false)
	g.waitEntered(t)
	n := 1
	for ; !reg.Stats().Coalescing; n++ {
		require.Less(t, n, 3*pageLen, "the handler must switch at a page boundary")
		p.Distribute(addOf("ns", "f-"+strconv.Itoa(n)), false)
	}
	return n
}

// What a coalescing handler is told: an Add and Delete it never saw are
// not delivered; a Delete of what it saw is, whatever came between; a
// re-creation after a Delete is a Delete then an Add.
func TestCoalescingKeepsEveryDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, g, reg, filled := backloggedHandler(t, HandlerOptions{})

		p.Distribute(Notification{Type: Add, Key: "ns/gone", Object: pod("ns", "gone")}, false)
		p.Distribute(Notification{Type: Delete, Key: "ns/gone", Object: pod("ns", "gone")}, false)
		p.Distribute(versioned("f-0", 1, 2), false) // f-0 was delivered: the handler saw it
		p.Distribute(Notification{Type: Delete, Key: "ns/f-0", Object: pod("ns", "f-0")}, false)
		p.Distribute(Notification{Type: Delete, Key: "ns/f-1", Object: pod("ns", "f-1")}, false)
		p.Distribute(Notification{Type: Add, Key: "ns/f-1", Object: pod("ns", "f-1")}, false)

		close(g.release)
		got := collect(t, g, filled-1+3) // the rest of the journal, then three
		var tail []string
		for _, n := range got[filled-1:] {
			tail = append(tail, n.Type.String()+" "+n.Key)
		}
		assert.Equal(t, []string{"Delete ns/f-0", "Delete ns/f-1", "Add ns/f-1"}, tail)
		synctest.Wait() // the handler is idle: it was told everything
		require.Zero(t, reg.Stats().Pending)
		assert.EqualValues(t, 3, reg.Stats().Coalesced, "the add and delete of gone, the update of f-0")
	})
}

// The sync marker keeps its place in a backlog: the handler syncs once it
// has been told everything distributed before MarkSynced.
func TestCoalescingHandlerSyncsAfterItsBacklog(t *testing.T) {
	p, g, reg, filled := backloggedHandler(t, HandlerOptions{})
	p.Distribute(addOf("ns", "before"), false)
	p.MarkSynced()
	p.Distribute(addOf("ns", "after"), false)
	require.False(t, reg.HasSynced())

	for range filled - 1 { // the journal part, and the notification that switched it
		step(t, g)
	}
	require.Equal(t, "ns/before", step(t, g).Key)
	require.False(t, reg.HasSynced(), "not before the handler returned from the last one")
	require.Equal(t, "ns/after", step(t, g).Key)
	waitClosed(t, reg.Synced(), "the handler to sync")
	g.open(t, 1)
}

// A handler due for a resync gets it in its backlog too; one that is not
// due does not. It runs in a synctest bubble, so that the resync period
// passes when the test sleeps.
func TestCoalescingHandlerGetsOnlyItsResyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, g, reg, filled := backloggedHandler(t, HandlerOptions{ResyncPeriod: MinResyncPeriod})

		require.False(t, p.ShouldResync(time.Now()))
		p.Distribute(versioned("not-due", 0, 1), true)
		time.Sleep(MinResyncPeriod)
		require.True(t, p.ShouldResync(time.Now()))
		p.Distribute(versioned("due", 0, 1), true)

		close(g.release)
		got := collect(t, g, filled)
		assert.Equal(t, "ns/due", got[filled-1].Key)
		synctest.Wait() // the handler is idle: everything it was owed is handled
		require.Zero(t, reg.Stats().Pending)
		assert.Zero(t, reg.Stats().Coalesced)
	})
}

// Removing a coalescing handler drops its backlog and its claims on the
// journal, even while it is stuck in Handle.
func TestRemoveCoalescingHandler(t *testing.T) {
	p, g, reg, _ := backloggedHandler(t, HandlerOptions{})
	p.Distribute(addOf("ns", "x"), false)
	done := reg.Remove()
	st := reg.Stats()
	assert.Zero(t, st.Pending)
	assert.Zero(t, st.BufferCapacity)
	assert.Zero(t, reg.bl.len(), "the backlog was dropped")
	p.Distribute(addOf("ns", "y"), false)
	assert.Zero(t, reg.bl.len(), "nothing is pushed after Remove")
	close(g.release)
	waitClosed(t, done, "the goroutine to exit")
}

// KeepAllUpdates: every notification is delivered, however far behind.
func TestKeepAllUpdatesNeverCoalesces(t *testing.T) {
	p := New(Options{})
	g := newGate(t)
	reg, err := p.AddHandler(g, HandlerOptions{KeepAllUpdates: true, BacklogLimit: 1}, nil)
	require.NoError(t, err)
	startProcessor(t, p)
	const n = 4 * pageLen
	for i := range n {
		p.Distribute(versioned("a", i, i+1), false)
		if i == 0 {
			g.waitEntered(t)
		}
	}
	st := reg.Stats()
	assert.False(t, st.Coalescing)
	assert.Equal(t, n, st.Pending)
	close(g.release)
	got := collect(t, g, n-1)
	assert.Equal(t, strconv.Itoa(n), rvOf(got[len(got)-1]))
	assert.Zero(t, reg.Stats().Coalesced)
}

func TestNegativeBacklogLimit(t *testing.T) {
	p := New(Options{})
	_, err := p.AddHandler(newRecorder(), HandlerOptions{BacklogLimit: -1}, nil)
	require.True(t, errors.Is(err, ErrNegativeBacklogLimit), "%v", err)
}

// view is a handler that rebuilds the state from what it is told, checking
// that no key's version ever goes backwards and that every Update starts
// from the version it was last told about. It sleeps now and then, so that
// it falls behind, switches to its backlog and comes back, again and again
// (in a synctest bubble, its sleeps end while the writer pauses).
type view struct {
	t     *testing.T
	slow  func(i int) bool
	calls int
	state map[string]int // key -> version; only the handler's goroutine touches it
	bad   []string
}

func (v *view) Handle(n Notification) {
	v.calls++
	if v.slow(v.calls) {
		time.Sleep(50 * time.Microsecond)
	}
	rv, _ := strconv.Atoi(rvOf(n))
	last, seen := v.state[n.Key]
	switch {
	case n.Type == Delete:
		delete(v.state, n.Key)
		return
	case seen && rv <= last:
		v.bad = append(v.bad, fmt.Sprintf("%s went from %d to %d", n.Key, last, rv))
	case n.Type == Update && seen:
		if was, _ := strconv.Atoi(n.Old.(*corev1.Pod).ResourceVersion); was != last {
			v.bad = append(v.bad, fmt.Sprintf("%s: Update from %d, but the handler saw %d", n.Key, was, last))
		}
	}
	v.state[n.Key] = rv
}

// Handlers switching between the journal and their backlogs while the
// writer runs: every one ends with the writer's state, sees no version go
// backwards, and its counters add up.
func TestCoalescingUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		type handler struct {
			v   *view
			reg *Registration
		}
		var hs []handler
		for i, slow := range []func(int) bool{
			func(int) bool { return false },
			func(c int) bool { return c%3 == 0 },
			func(c int) bool { return c%50 < 25 },
			func(c int) bool { return true },
		} {
			v := &view{t: t, slow: slow, state: map[string]int{}}
			reg, err := p.AddHandler(v, HandlerOptions{BacklogLimit: 1 + i*40}, nil)
			require.NoError(t, err)
			hs = append(hs, handler{v, reg})
		}
		startProcessor(t, p)

		// The writer's state: key -> version, created, updated and deleted in
		// turn, as the informer would tell it.
		want := map[string]int{}
		rv := 0
		for i := range 20_000 {
			key := "k" + strconv.Itoa(i%7)
			rv++
			obj := pod("ns", key)
			obj.ResourceVersion = strconv.Itoa(rv)
			old, exists := want[key]
			switch {
			case !exists:
				p.Distribute(Notification{Type: Add, Key: key, Object: obj}, false)
				want[key] = rv
			case i%11 == 0:
				p.Distribute(Notification{Type: Delete, Key: key, Object: obj}, false)
				delete(want, key)
			default:
				was := pod("ns", key)
				was.ResourceVersion = strconv.Itoa(old)
				p.Distribute(Notification{Type: Update, Key: key, Object: obj, Old: was}, false)
				want[key] = rv
			}
			if i%1024 < 512 && i%16 == 15 {
				// In the bubble, time passes only while the writer
				// pauses, so the slow handlers' sleeps end only then.
				// It pauses often for half of every 1024 notifications,
				// and not at all for the other half: in turn the
				// handlers catch up, and fall behind (even the one
				// that never sleeps), again and again while it writes.
				time.Sleep(10 * time.Microsecond)
			}
		}
		// What a handler still owes is at most its limit, a page or two and
		// a key or seven, each a 50µs sleep at worst: a second of the
		// bubble's time is plenty for all of it, and then every handler is
		// idle.
		time.Sleep(time.Second)
		synctest.Wait()
		var coalesced uint64
		for i, h := range hs {
			st := h.reg.Stats()
			require.Zero(t, st.Pending, "handler %d: %+v", i, st)
			assert.EqualValues(t, 20_000, st.Delivered+st.Coalesced, "handler %d: %+v", i, st)
			<-h.reg.Remove() // its goroutine is done: its state may be read
			assert.Equal(t, want, h.v.state, "handler %d", i)
			assert.Empty(t, h.v.bad, "handler %d", i)
			t.Logf("handler %d: delivered %d, coalesced %d, max pending %d", i, st.Delivered, st.Coalesced, st.MaxPending)
			coalesced += st.Coalesced
		}
		assert.Positive(t, coalesced, "some handler fell behind and coalesced")
	})
}
