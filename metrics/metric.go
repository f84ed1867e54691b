package metrics

import (
	"math"
	"sort"
	"sync/atomic"
)

// Kind says what a family's samples mean to a scraper.
type Kind uint8

const (
	// Counter only goes up, except to zero when its source restarts.
	Counter Kind = iota + 1
	// Gauge goes up and down.
	Gauge
	// Histogram counts observations into buckets.
	Histogram
)

// String returns the kind's name in the text format's # TYPE line.
func (k Kind) String() string {
	switch k {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	}
	return "untyped"
}

// Desc describes one metric family. Descs are values the library declares
// once (names.go) and never modifies.
type Desc struct {
	Name string
	Help string
	Kind Kind
	// Labels are the label names, in the order label values are given.
	Labels []string
	// Buckets are a histogram's upper bounds, ascending; +Inf is implied.
	Buckets []float64
}

// Sample is one series of a family: its label values and its value, or,
// for a histogram, its count, sum and cumulative bucket counts.
type Sample struct {
	LabelValues []string
	Value       float64
	Count       uint64
	Sum         float64
	// Buckets[i] counts the observations <= Desc.Buckets[i].
	Buckets []uint64
}

// Family is a Desc and its samples, as Gather returns them.
type Family struct {
	Desc    *Desc
	Samples []Sample
}

// Observer records observations into one histogram series. It is safe for
// concurrent use and never blocks: an observation is a few atomic adds. A
// nil *Observer ignores observations, so a part without a Registry pays one
// nil check.
type Observer struct {
	desc    *Desc
	labels  []string
	buckets []atomic.Uint64 // not cumulative; +Inf last
	count   atomic.Uint64
	sumBits atomic.Uint64 // float64 bits of the sum
}

func newObserver(d *Desc, labels []string) *Observer {
	return &Observer{desc: d, labels: labels, buckets: make([]atomic.Uint64, len(d.Buckets)+1)}
}

// Observe records v, in the family's unit (seconds for durations).
func (o *Observer) Observe(v float64) {
	if o == nil {
		return
	}
	o.buckets[sort.SearchFloat64s(o.desc.Buckets, v)].Add(1)
	for {
		old := o.sumBits.Load()
		if o.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
	o.count.Add(1) // last: a reader that sees the count sees the bucket
}

func (o *Observer) sample() Sample {
	s := Sample{LabelValues: o.labels, Count: o.count.Load(), Sum: math.Float64frombits(o.sumBits.Load())}
	s.Buckets = make([]uint64, len(o.desc.Buckets))
	var cum uint64
	for i := range s.Buckets {
		cum += o.buckets[i].Load()
		s.Buckets[i] = cum
	}
	// Observations may land between the loads: the count is at least
	// the top bucket, as the format requires.
	s.Count = max(s.Count, cum+o.buckets[len(s.Buckets)].Load())
	return s
}

// Count is a counter the library increments as events happen, for figures
// no Stats keeps (rest_client_requests_total). It is safe for concurrent
// use; a nil *Count ignores increments.
type Count struct {
	desc   *Desc
	labels []string
	n      atomic.Uint64
}

// Inc adds one.
func (c *Count) Inc() {
	if c != nil {
		c.n.Add(1)
	}
}

func (c *Count) sample() Sample {
	return Sample{LabelValues: c.labels, Value: float64(c.n.Load())}
}
