package events

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The correlator decides, for each event the caller recorded, whether it
// is written at all (the spam filter) and whether it becomes a new Event
// object or bumps the count of one already written (aggregation). It is a
// plain state machine: time is an argument, it starts no goroutine, and
// only the recorder's writer goroutine touches it.

// Defaults of Options, client-go's figures.
const (
	// DefaultSpamBurst is how many events one object may get at once.
	DefaultSpamBurst = 25
	// DefaultSpamRefill is how long one more event takes to be allowed,
	// once the burst is spent: one per five minutes.
	DefaultSpamRefill = 5 * time.Minute
	// DefaultQueueSize bounds the events waiting to be written.
	DefaultQueueSize = 1000
	// similarThreshold is how many distinct messages with one object,
	// type and reason become separate Events before the next ones are
	// combined into one.
	similarThreshold = 10
	// aggregationWindow is how long an Event is counted on: an identical
	// event after it starts a new Event object.
	aggregationWindow = 10 * time.Minute
	// maxEntries bounds each of the correlator's maps, as client-go's
	// LRU caches are bounded. An entry forgotten early costs one more
	// Event object on the server, never a lost event.
	maxEntries = 4096
	// combinedPrefix starts the message of an Event that stands for
	// similar events with different messages.
	combinedPrefix = "(combined from similar events): "
)

// objectRef names the involved object. Together with the recorder's one
// source (component and instance), it is the spam filter's key.
type objectRef struct {
	kind      schema.GroupVersionKind
	namespace string
	name      string
	uid       types.UID
	rv        string
}

// similarKey groups events that differ by message only: the key of
// aggregation.
type similarKey struct {
	object    objectRef
	eventType string
	reason    string
}

// loggedKey names one Event object: similar events with one message, or
// all the combined ones (combined true, message "").
type loggedKey struct {
	similarKey
	message  string
	combined bool
}

// bucket is a token bucket: tokens refill one per refill, up to burst.
type bucket struct {
	tokens float64
	last   time.Time
}

// similar counts the distinct messages of a similarKey in one window.
type similar struct {
	first    time.Time
	messages map[string]struct{} // at most similarThreshold
}

// logged is an Event object on the server, and how often it happened.
type logged struct {
	name   string // the Event object's name; "" until created
	api    api    // which API created it
	count  int32
	first  time.Time
	latest time.Time
}

// correlator holds the spam buckets and the aggregation records. Not safe
// for concurrent use: the writer goroutine owns it.
type correlator struct {
	burst   int
	refill  time.Duration
	buckets map[objectRef]*bucket
	similar map[similarKey]*similar
	logged  map[loggedKey]*logged
}

func newCorrelator(burst int, refill time.Duration) *correlator {
	return &correlator{burst: burst, refill: refill, buckets: map[objectRef]*bucket{},
		similar: map[similarKey]*similar{}, logged: map[loggedKey]*logged{}}
}

// allow takes a token from obj's bucket, or says the event is spam.
func (c *correlator) allow(obj objectRef, now time.Time) bool {
	b := c.buckets[obj]
	if b == nil {
		evictOne(c.buckets)
		b = &bucket{tokens: float64(c.burst), last: now}
		c.buckets[obj] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(float64(c.burst), b.tokens+float64(elapsed)/float64(c.refill))
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// record files one event and returns the Event object it counts on,
// with its message: a new one (count 1) or an existing one, its count
// already bumped.
func (c *correlator) record(k similarKey, message string, now time.Time) (*logged, string) {
	lk := loggedKey{similarKey: k, message: message}
	if c.isCombined(k, message, now) {
		lk = loggedKey{similarKey: k, combined: true}
		message = combinedPrefix + message
	}
	l := c.logged[lk]
	if l == nil || now.Sub(l.first) > aggregationWindow {
		if l == nil {
			evictOne(c.logged)
		}
		l = &logged{first: now}
		c.logged[lk] = l
	}
	l.count++
	l.latest = now
	return l, message
}

// isCombined notes message among k's similar events and says whether it
// is one too many to have an Event of its own.
func (c *correlator) isCombined(k similarKey, message string, now time.Time) bool {
	s := c.similar[k]
	if s == nil || now.Sub(s.first) > aggregationWindow {
		if s == nil {
			evictOne(c.similar)
		}
		s = &similar{first: now, messages: map[string]struct{}{}}
		c.similar[k] = s
	}
	if _, seen := s.messages[message]; seen {
		return false
	}
	if len(s.messages) >= similarThreshold-1 {
		return true
	}
	s.messages[message] = struct{}{}
	return false
}

// evictOne makes room in a full map by dropping an arbitrary entry: not
// the least recently used, which would cost a list per map; the cost of
// a wrong choice is one more Event object.
func evictOne[K comparable, V any](m map[K]V) {
	if len(m) < maxEntries {
		return
	}
	for k := range m {
		delete(m, k)
		return
	}
}
