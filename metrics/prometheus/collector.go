package prometheus

import (
	"fmt"
	"sync"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/seed31a95821/informer/metrics"
)

// Collector is a prometheus.Collector that reports everything a
// metrics.Registry holds, translated at each gather. Register it with
// prometheus.Registerer.MustRegister. It is safe for concurrent use.
//
// It is an unchecked collector (Describe sends nothing): the families a
// Registry holds depend on which parts were given it and are running, so
// they cannot be declared up front.
type Collector struct {
	reg *metrics.Registry

	mu    sync.Mutex // guards descs
	descs map[*metrics.Desc]*prom.Desc
}

// NewCollector returns a Collector of reg.
func NewCollector(reg *metrics.Registry) *Collector {
	return &Collector{reg: reg, descs: map[*metrics.Desc]*prom.Desc{}}
}

// Describe implements prometheus.Collector; it sends nothing (see Collector).
func (c *Collector) Describe(chan<- *prom.Desc) {}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	for _, f := range c.reg.Gather() {
		d := c.desc(f.Desc)
		for _, s := range f.Samples {
			ch <- metric(d, f.Desc, s)
		}
	}
}

// desc returns the prometheus.Desc of d, made once.
func (c *Collector) desc(d *metrics.Desc) *prom.Desc {
	c.mu.Lock()
	defer c.mu.Unlock()
	pd, ok := c.descs[d]
	if !ok {
		pd = prom.NewDesc(d.Name, d.Help, d.Labels, nil)
		c.descs[d] = pd
	}
	return pd
}

// metric translates one sample; a sample client_golang refuses (its label
// values do not fit the labels) becomes an invalid metric, which fails the
// gather with the reason instead of vanishing.
func metric(pd *prom.Desc, d *metrics.Desc, s metrics.Sample) prom.Metric {
	var (
		m   prom.Metric
		err error
	)
	switch d.Kind {
	case metrics.Counter:
		m, err = prom.NewConstMetric(pd, prom.CounterValue, s.Value, s.LabelValues...)
	case metrics.Gauge:
		m, err = prom.NewConstMetric(pd, prom.GaugeValue, s.Value, s.LabelValues...)
	case metrics.Histogram:
		buckets := make(map[float64]uint64, len(d.Buckets))
		for i, le := range d.Buckets {
			buckets[le] = s.Buckets[i]
		}
		m, err = prom.NewConstHistogram(pd, s.Count, s.Sum, buckets, s.LabelValues...)
	default:
		err = fmt.Errorf("metrics/prometheus: %s has unknown kind %d", d.Name, d.Kind)
	}
	if err != nil {
		return prom.NewInvalidMetric(pd, err)
	}
	return m
}
