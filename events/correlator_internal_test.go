package events

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

var pod = objectRef{kind: corev1.SchemeGroupVersion.WithKind("Pod"), namespace: "shop", name: "web"}

// The token bucket: the burst at once, then one per refill, never more
// than the burst saved up; each object has its own.
func TestSpamBucket(t *testing.T) {
	c := newCorrelator(3, time.Minute)
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		assert.True(t, c.allow(pod, t0), "event %d of the burst", i)
	}
	assert.False(t, c.allow(pod, t0))
	other := pod
	other.name = "api"
	assert.True(t, c.allow(other, t0), "another object has its own bucket")
	assert.False(t, c.allow(pod, t0.Add(59*time.Second)))
	assert.True(t, c.allow(pod, t0.Add(time.Minute)))
	assert.False(t, c.allow(pod, t0.Add(time.Minute)))
	later := t0.Add(time.Hour)
	for range 3 {
		assert.True(t, c.allow(pod, later))
	}
	assert.False(t, c.allow(pod, later), "an hour saves up the burst, not 60")
}

// Identical events count on one Event; after the window, a new one.
func TestIdenticalEventsCountOnOne(t *testing.T) {
	c := newCorrelator(25, time.Minute)
	k := similarKey{object: pod, eventType: corev1.EventTypeNormal, reason: "Synced"}
	t0 := time.Unix(1000, 0)
	first, msg := c.record(k, "ok", t0)
	assert.Equal(t, "ok", msg)
	first.name = "web.1"
	for i := 2; i <= 5; i++ {
		l, _ := c.record(k, "ok", t0.Add(time.Duration(i)*time.Second))
		assert.Same(t, first, l)
		assert.Equal(t, int32(i), l.count)
	}
	l, _ := c.record(k, "ok", t0.Add(aggregationWindow+time.Second))
	assert.NotSame(t, first, l, "a new Event after the window")
	assert.Equal(t, int32(1), l.count)
	assert.Empty(t, l.name)
}

// Nine different messages are nine Events; from the tenth on, they count
// on one combined Event that shows the latest message. A repeat of one of
// the nine still counts on its own.
func TestSimilarEventsCombine(t *testing.T) {
	c := newCorrelator(25, time.Minute)
	k := similarKey{object: pod, eventType: corev1.EventTypeWarning, reason: "Failed"}
	t0 := time.Unix(1000, 0)
	seen := map[*logged]bool{}
	for i := range 9 {
		l, msg := c.record(k, "error "+string(rune('a'+i)), t0)
		assert.Equal(t, "error "+string(rune('a'+i)), msg)
		seen[l] = true
	}
	assert.Len(t, seen, 9)
	var combined *logged
	for _, m := range []string{"error x", "error y", "error z"} {
		l, msg := c.record(k, m, t0)
		assert.Equal(t, combinedPrefix+m, msg)
		assert.False(t, seen[l])
		combined = l
	}
	assert.Equal(t, int32(3), combined.count)
	l, msg := c.record(k, "error a", t0)
	assert.Equal(t, "error a", msg)
	assert.Equal(t, int32(2), l.count)
}

// A long message is cut to events.k8s.io's limit on a rune boundary.
func TestTruncate(t *testing.T) {
	long := string(make([]byte, 1023)) + "é"
	assert.Len(t, truncate(long), 1023)
	assert.Equal(t, "short", truncate("short"))
}

// An Event's name is a DNS subdomain: at most 253 characters, however long
// the object's name, and no dot or dash left before the time by the cut.
func TestEventNameFitsASubdomain(t *testing.T) {
	at := time.Unix(1700000000, 123)
	assert.Equal(t, "web.17979cfe362a007b", eventName("web", at))
	long := strings.Repeat("a", 230) + "-" + strings.Repeat("b", 22) // 253, the longest name
	name := eventName(long, at)
	assert.LessOrEqual(t, len(name), 253)
	assert.Empty(t, validation.IsDNS1123Subdomain(name), name)
	assert.Empty(t, validation.IsDNS1123Subdomain(eventName(strings.Repeat("a", 235)+".b", at)))
}
