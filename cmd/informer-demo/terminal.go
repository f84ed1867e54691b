package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// legend explains the columns of the status line, once, before the first.
const legend = `legend:
  t          time since start
  events/s   changes the watches delivered in the last second (the initial list is state, not events)
  cache      objects in each informer's cache
  <handler>  lag: notifications waiting for that handler (max: the worst so far); avg: mean time per call
  restarts   watches reopened after the first (a break, the server's timeout); none is a relist
  relists    new snapshots because a resume was refused (410 Expired): the expensive case
`

// printLegend writes the header: what runs, and how to read the lines.
func printLegend(out io.Writer, server string, faults bool) {
	fmt.Fprintf(out, "informer-demo: pods and services from %s, one informer each, three handlers\n", server)
	fmt.Fprint(out, legend)
	if faults {
		fmt.Fprintln(out, "  (with -http ADDR, a page shows the pipeline live, with buttons that inject faults)")
	}
}

// report prints one status line a second until ctx is done.
func (d *dashboard) report(ctx context.Context, m *monitor) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fmt.Fprintln(d.out, statusLine(m.snapshot()))
		}
	}
}

// statusLine is the one-line status: elapsed time, throughput, cache sizes,
// per-handler lag and mean time, and how often the watches were reopened.
func statusLine(s snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t %5.0fs | events/s %6.0f | cache", s.Elapsed, s.EventsPerSec)
	for _, inf := range s.Informers {
		fmt.Fprintf(&b, " %s %d", inf.Name, inf.Cached)
	}
	b.WriteString(" |")
	for _, h := range s.Handlers {
		fmt.Fprintf(&b, " %s lag %d (max %d) avg %v |", h.Name, h.Pending, h.MaxPending, threeDigits(micros(h.MeanMicros)))
	}
	restarts, relists := totals(s)
	fmt.Fprintf(&b, " restarts %d, relists %d", restarts, relists)
	return b.String()
}

// totals adds up the watch restarts (watches after each informer's first,
// but for the one each relist opens) and relists of every informer.
func totals(s snapshot) (restarts, relists int64) {
	for _, inf := range s.Informers {
		restarts += max(0, inf.Watches-1-inf.Relists)
		relists += inf.Relists
	}
	return restarts, relists
}

// printSummary writes what the run amounted to, at exit.
func printSummary(out io.Writer, s snapshot) {
	restarts, relists := totals(s)
	fmt.Fprintf(out, "summary after %.0fs: %d events, %d watch restarts, %d relists, %d tombstones\n",
		s.Elapsed, s.Events, restarts, relists, s.Tombstones)
	for _, h := range s.Handlers {
		caught := "never caught up with the initial list"
		if h.CaughtUpAfter >= 0 {
			caught = fmt.Sprintf("caught up with the initial list at %.1fs", h.CaughtUpAfter)
		}
		behind := "nothing pending at exit"
		if h.Pending > 0 {
			behind = fmt.Sprintf("%d pending at exit", h.Pending)
		}
		fmt.Fprintf(out, "  %-9s %d calls, avg %v, worst backlog %d; %s; %s\n",
			h.Name, h.Handled, threeDigits(micros(h.MeanMicros)), h.MaxPending, caught, behind)
	}
}

func micros(us float64) time.Duration { return time.Duration(us * 1e3) }

// threeDigits rounds d to three significant digits: a fast handler's 312ns
// and a slow one's 2.33ms both read at a glance.
func threeDigits(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d >= 1000*unit {
		unit *= 10
	}
	return d.Round(unit)
}
