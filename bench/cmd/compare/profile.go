package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
)

// Profiles of one step at a time (-profile DIR): the evidence behind the
// "why" of each row in docs/benchmarks.md. For every step (a sync, a
// relist, a burst, a backlog) the child writes a CPU profile of the step
// and a heap profile at its end, and the parent, which runs the server and
// the writer, a CPU profile of the same stretch, all named after the step:
//
//	DIR/07-ours-relist-10k-protobuf.child.cpu   the informer's CPU
//	DIR/07-ours-relist-10k-protobuf.child.heap  its heap, as of the last collection
//	DIR/07-ours-relist-10k-protobuf.peak.heap   a relist's: at the peak of the live heap
//	DIR/07-ours-relist-10k-protobuf.server.cpu  the server's and the writer's CPU
//	DIR/25-ours-churn-10k-json-after-random-order-churn.retained.heap
//	                                            after a churn: what the cache holds, collected
//
// Read them with `go tool pprof -top FILE` (and -sample_index=inuse_space
// for the heap).

// stepProfile is one step's CPU profile in progress, nil when not
// profiling (every method then does nothing).
type stepProfile struct {
	base string // the path without its suffix
	f    *os.File
}

// startProfile starts a CPU profile named base + suffix + ".cpu" in dir;
// it returns nil when dir is empty.
func startProfile(dir, name, suffix string) (*stepProfile, error) {
	if dir == "" || name == "" {
		return nil, nil
	}
	p := &stepProfile{base: filepath.Join(dir, fileName(name))}
	f, err := os.Create(p.base + suffix + ".cpu")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile %s: %w", name, err)
	}
	p.f = f
	return p, nil
}

// stop ends the CPU profile and, if heapSuffix is set, writes the heap
// profile base + heapSuffix + ".heap".
func (p *stepProfile) stop(heapSuffix string) error {
	if p == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	if heapSuffix != "" {
		err = errors.Join(err, writeHeap(p.base+heapSuffix+".heap"))
	}
	return err
}

func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fileName turns a step's name into a file name.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, name)
}

// peakHeap writes a heap profile each time the collector reports a live
// heap larger than any before: the heap profile describes the heap as of
// the last completed collection, which is when /gc/heap/live is measured,
// so the last file written is what was live at the peak.
type peakHeap struct {
	path string

	mu   sync.Mutex // guards peak
	peak uint64
}

func (p *peakHeap) observe(live uint64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if live <= p.peak {
		return
	}
	p.peak = live
	if err := writeHeap(p.path); err != nil {
		fmt.Fprintln(os.Stderr, "compare: peak heap profile:", err)
	}
}
