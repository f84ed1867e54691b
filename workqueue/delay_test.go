package workqueue_test

import (
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/workqueue"
)

// ready drains what the queue has ready, in order.
func ready(q *workqueue.Queue[string]) []string {
	var got []string
	for q.Len() > 0 {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func TestAddAfter(t *testing.T) {
	tests := []struct {
		name  string
		adds  []time.Duration // delays of item "a", in order
		check map[time.Duration]bool
	}{
		{"due after its delay", []time.Duration{time.Second}, map[time.Duration]bool{999 * time.Millisecond: false, time.Second: true}},
		{"a second, later add keeps the earlier time", []time.Duration{time.Second, time.Hour}, map[time.Duration]bool{time.Second: true}},
		{"a second, earlier add moves it up", []time.Duration{time.Hour, time.Second}, map[time.Duration]bool{time.Second: true}},
		{"zero delay adds at once", []time.Duration{0}, map[time.Duration]bool{0: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var q workqueue.Queue[string]
				start := time.Now()
				for _, d := range tt.adds {
					q.AddAfter("a", d)
				}
				assert.LessOrEqual(t, q.Stats().Waiting, 1, "an item waits once")
				for _, at := range []time.Duration{0, 999 * time.Millisecond, time.Second} {
					want, ok := tt.check[at]
					if !ok {
						continue
					}
					time.Sleep(at - time.Since(start)) // fake time: the bubble's clock
					synctest.Wait()
					assert.Equal(t, want, q.Len() == 1, "at %v", at)
				}
				q.ShutDown()
			})
		})
	}
}

// Many delayed items share one timer and come out in due order, with no
// goroutine of their own.
func TestAddAfterOrderAndNoGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q workqueue.Queue[string]
		for i := 9; i >= 0; i-- {
			q.AddAfter(fmt.Sprint(i), time.Duration(i+1)*time.Second)
		}
		// Nothing but the test's own goroutine runs in the bubble: the
		// delayed items hold a timer, not goroutines (synctest.Wait would
		// block on any).
		synctest.Wait()
		assert.Equal(t, 10, q.Stats().Waiting)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, ready(&q))
		assert.Zero(t, q.Stats().Waiting)
	})
}

// More items due at one moment than the timer moves per hold of the lock
// all come out, and the one due later still waits.
func TestAddAfterManyDueAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q workqueue.Queue[string]
		const n = 1000 // several batches of the timer's function
		var want []string
		for i := range n {
			item := fmt.Sprintf("%04d", i)
			want = append(want, item)
			q.AddAfter(item, time.Second)
		}
		q.AddAfter("later", time.Hour)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.ElementsMatch(t, want, ready(&q))
		assert.Equal(t, 1, q.Stats().Waiting, "the item due in an hour still waits")
		q.ShutDown()
	})
}

func TestShutDownDropsDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q workqueue.Queue[string]
		q.AddAfter("a", time.Second)
		q.ShutDown()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		_, shutdown := q.Get()
		assert.True(t, shutdown)
		assert.Zero(t, q.Stats().Waiting)
	})
}

// AddRateLimited backs off per item, Forget resets it, and a worker blocked
// in Get is woken when a delayed item falls due.
func TestAddRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New(workqueue.Options[string]{
			RateLimiter: &workqueue.ItemExponential[string]{BaseDelay: time.Second, MaxDelay: time.Minute},
		})
		got := make(chan string)
		go func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					close(got)
					return
				}
				got <- item
				q.Done(item)
			}
		}()
		start := time.Now()
		for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			q.AddRateLimited("a")
			require.Equal(t, "a", <-got)
			assert.Equal(t, want, time.Since(start), "failure %d", i+1)
			start = time.Now()
		}
		assert.Equal(t, 3, q.NumRequeues("a"))
		q.Forget("a")
		assert.Equal(t, 0, q.NumRequeues("a"))
		q.AddRateLimited("a")
		<-got
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, uint64(4), q.Stats().Retries)
		q.ShutDown()
		<-got
	})
}

// longLimiter sends every item to wait as long as a Duration can say, as a
// token bucket of no tokens does (rate.InfDuration).
type longLimiter struct{}

func (longLimiter) When(string) time.Duration { return math.MaxInt64 }
func (longLimiter) Forget(string)             {}
func (longLimiter) NumRequeues(string) int    { return 0 }

// Delays at the extremes of time.Duration: the longest waits (and is not
// lost), one of zero or less adds at once, and neither stops the items
// delayed around it from falling due. The queue has run a while first, so
// that "now + delay" would overflow were it not clamped.
func TestAddAfterExtremes(t *testing.T) {
	tests := []struct {
		name     string
		add      func(q *workqueue.Queue[string])
		readyNow bool // the extreme item is ready at once
	}{
		{"MaxInt64", func(q *workqueue.Queue[string]) { q.AddAfter("x", math.MaxInt64) }, false},
		{"MaxInt64 less a nanosecond", func(q *workqueue.Queue[string]) { q.AddAfter("x", math.MaxInt64-1) }, false},
		{"a rate limiter's MaxInt64", func(q *workqueue.Queue[string]) { q.AddRateLimited("x") }, false},
		{"zero", func(q *workqueue.Queue[string]) { q.AddAfter("x", 0) }, true},
		{"negative", func(q *workqueue.Queue[string]) { q.AddAfter("x", -time.Second) }, true},
		{"MinInt64", func(q *workqueue.Queue[string]) { q.AddAfter("x", math.MinInt64) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := workqueue.New(workqueue.Options[string]{RateLimiter: longLimiter{}})
				q.AddAfter("early", time.Second)
				time.Sleep(time.Millisecond) // the queue's clock is past zero
				tt.add(q)
				q.AddAfter("late", time.Hour)
				synctest.Wait()
				if tt.readyNow {
					assert.Equal(t, []string{"x"}, ready(q), "ready at once")
				} else {
					assert.Zero(t, q.Len(), "nothing is ready yet")
				}
				time.Sleep(time.Second)
				synctest.Wait()
				assert.Equal(t, []string{"early"}, ready(q), "the item due in a second")
				time.Sleep(time.Hour)
				synctest.Wait()
				assert.Equal(t, []string{"late"}, ready(q), "the item due in an hour")
				want := 0
				if !tt.readyNow {
					want = 1
				}
				assert.Equal(t, want, q.Stats().Waiting, "the longest delay still waits")
				q.ShutDown()
			})
		})
	}
}
