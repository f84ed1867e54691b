package metrics

import (
	"slices"
	"strings"
	"sync"
)

// Collector reports figures when a Registry is gathered, usually by reading
// a part's Stats. It must be safe for concurrent use and quick: it runs on
// the scraper's goroutine.
type Collector interface {
	// Collect calls emit once per series.
	Collect(emit func(d *Desc, s Sample))
}

// CollectorFunc adapts a function to Collector.
type CollectorFunc func(emit func(d *Desc, s Sample))

// Collect calls f.
func (f CollectorFunc) Collect(emit func(d *Desc, s Sample)) { f(emit) }

// Registry keeps the figures of every part it is given to. The zero value
// is ready to use; a nil *Registry does nothing, so that a part's metrics are
// off until a Registry is passed to it. It is safe for concurrent use.
//
// There is no global Registry: a program makes one and passes it to the
// parts it wants measured, and serves it (Handler).
type Registry struct {
	mu         sync.Mutex // guards every field below
	nextID     uint64
	collectors map[uint64]Collector
	series     map[string]sampler // by seriesKey: observers and counts
}

// sampler is an *Observer or a *Count.
type sampler interface{ sample() Sample }

// Register adds c, and returns the function that removes it again; a part
// calls that when it stops, so that a stopped part's figures disappear and
// the Registry does not keep it alive. With a nil Registry both do nothing.
func (r *Registry) Register(c Collector) (unregister func()) {
	if r == nil {
		return func() {}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.collectors == nil {
		r.collectors = map[uint64]Collector{}
	}
	r.nextID++
	id := r.nextID
	r.collectors[id] = c
	return func() {
		r.mu.Lock()
		delete(r.collectors, id)
		r.mu.Unlock()
	}
}

// Observer returns the histogram series of d with these label values,
// creating it on first use: parts that share a name (two queues called
// "pods" in one Registry) share the series. It returns nil, which ignores
// observations, when r is nil.
func (r *Registry) Observer(d *Desc, labelValues ...string) *Observer {
	if r == nil {
		return nil
	}
	return seriesOf(r, d, labelValues, newObserver)
}

// Count returns the counter series of d with these label values, creating
// it on first use. It returns nil, which ignores increments, when r is nil.
func (r *Registry) Count(d *Desc, labelValues ...string) *Count {
	if r == nil {
		return nil
	}
	return seriesOf(r, d, labelValues, func(d *Desc, l []string) *Count { return &Count{desc: d, labels: l} })
}

func seriesOf[S sampler](r *Registry, d *Desc, labelValues []string, newSeries func(*Desc, []string) S) S {
	key := d.Name + "\xff" + strings.Join(labelValues, "\xff")
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.series[key].(S); ok {
		return s
	}
	if r.series == nil {
		r.series = map[string]sampler{}
	}
	s := newSeries(d, slices.Clone(labelValues))
	r.series[key] = s
	return s
}

// Gather returns every family, sorted by name, each with its series
// sorted by label values: a stable order, so that two scrapes diff well.
// Series of one family with the same label values, such as two queues both
// named "pods", or both left unnamed, are added together into one: a scraper
// refuses a series reported twice.
func (r *Registry) Gather() []Family {
	if r == nil {
		return nil
	}
	byName := map[string]*Family{}
	emit := func(d *Desc, s Sample) {
		f := byName[d.Name]
		if f == nil {
			f = &Family{Desc: d}
			byName[d.Name] = f
		}
		f.Samples = append(f.Samples, s)
	}
	r.mu.Lock()
	collectors := make([]Collector, 0, len(r.collectors))
	for _, c := range r.collectors {
		collectors = append(collectors, c)
	}
	for _, s := range r.series {
		switch s := s.(type) {
		case *Observer:
			emit(s.desc, s.sample())
		case *Count:
			emit(s.desc, s.sample())
		}
	}
	r.mu.Unlock()
	for _, c := range collectors { // outside mu: a collector takes its part's locks
		c.Collect(emit)
	}
	out := make([]Family, 0, len(byName))
	for _, f := range byName {
		slices.SortFunc(f.Samples, func(a, b Sample) int { return slices.Compare(a.LabelValues, b.LabelValues) })
		f.Samples = mergeSame(f.Samples)
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Family) int { return strings.Compare(a.Desc.Name, b.Desc.Name) })
	return out
}

// mergeSame adds together the adjacent samples of sorted that have the same
// label values.
func mergeSame(sorted []Sample) []Sample {
	out := sorted[:0]
	for _, s := range sorted {
		if n := len(out); n > 0 && slices.Equal(out[n-1].LabelValues, s.LabelValues) {
			out[n-1] = add(out[n-1], s)
			continue
		}
		out = append(out, s)
	}
	return out
}

// add returns the sum of two samples of one family.
func add(a, b Sample) Sample {
	sum := Sample{LabelValues: a.LabelValues, Value: a.Value + b.Value, Count: a.Count + b.Count, Sum: a.Sum + b.Sum}
	if len(a.Buckets) > 0 && len(a.Buckets) == len(b.Buckets) {
		sum.Buckets = make([]uint64, len(a.Buckets))
		for i := range sum.Buckets {
			sum.Buckets[i] = a.Buckets[i] + b.Buckets[i]
		}
	}
	return sum
}
