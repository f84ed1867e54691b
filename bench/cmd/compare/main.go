package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintln(os.Stderr, "compare:", err)
		}
		os.Exit(2)
	}
}

// options is the command line.
type options struct {
	quick      bool
	heap       bool
	jsonPath   string
	svgDir     string
	rounds     int
	pods       int
	encodings  string
	components bool
	benchDir   string
	profileDir string
	side       sideConfig
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.BoolVar(&o.quick, "quick", false, "10k pods, two rounds with the sides in turn, short component benchmarks (a few minutes on 2 cores)")
	fs.BoolVar(&o.heap, "heap", false, "only the heap rows: heap per cached pod synced, after a random-order churn and with unique templates; no component benchmarks")
	fs.StringVar(&o.jsonPath, "json", "", "also write the figures to this file as JSON")
	fs.StringVar(&o.svgDir, "svg", "", "also draw the charts as SVG files in this directory")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds per scenario, the sides in turn (default: 2 with -quick; else 3, and 2 at 100k)")
	fs.StringVar(&o.encodings, "encodings", "", "comma-separated encodings instead of json,protobuf")
	fs.IntVar(&o.pods, "pods", 0, "one size of this many pods instead of the plan's (smoke tests)")
	fs.BoolVar(&o.components, "components", true, "run the component benchmarks of the bench module too")
	fs.StringVar(&o.benchDir, "bench-dir", ".", "the bench module's directory, for the component benchmarks")
	fs.StringVar(&o.profileDir, "profile", "", "write CPU and heap profiles of every step, child and server, into this directory (profile.go)")
	// The child side of the command: not for people.
	fs.StringVar(&o.side.Side, "side", "", "run as a child: ours or client-go")
	fs.StringVar(&o.side.URL, "url", "", "child: the server")
	fs.StringVar(&o.side.Encoding, "encoding", "json", "child: json or protobuf")
	fs.BoolVar(&o.side.Strip, "strip", false, "child: strip managedFields")
	fs.IntVar(&o.side.Handlers, "handlers", 1, "child: handlers to register")
	fs.BoolVar(&o.side.Slow, "slow", false, "child: make the last handler slow")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if o.side.Side != "" {
		o.side.Profile = o.profileDir
		return runSide(ctx, o.side, stdin, stdout)
	}
	p := fullPlan()
	if o.quick {
		p = quickPlan()
	}
	if o.rounds > 0 {
		p.rounds, p.bigRounds = o.rounds, o.rounds
	}
	p.heapOnly = o.heap
	if o.encodings != "" {
		p.encodings = strings.Split(o.encodings, ",")
	}
	if o.pods > 0 {
		p.sizes, p.chartSizes = []int{o.pods}, nil
		p.events = func(n int) int { return max(n/2, 1) }
	}
	start := time.Now()
	r, err := measure(ctx, p, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "go run ./cmd/compare %s\n\n%s, %s/%s, %d CPUs, %v\n\n", flagsOf(o), runtime.Version(),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Since(start).Round(time.Second))
	r.markdown(stdout)
	if o.jsonPath != "" {
		if err := r.writeJSON(o.jsonPath); err != nil {
			return err
		}
	}
	if o.svgDir != "" {
		return r.charts.draw(o.svgDir)
	}
	return nil
}

func measure(ctx context.Context, p plan, o options) (*results, error) {
	c, err := newCluster(p.window())
	if err != nil {
		return nil, err
	}
	defer c.srv.Close()
	x := &runner{ctx: ctx, c: c, r: newResults(), profileDir: o.profileDir, window: p.window()}
	if err := x.run(p); err != nil {
		return nil, err
	}
	if o.components && !o.heap {
		log.Printf("component benchmarks in %s", o.benchDir)
		if err := runComponents(ctx, o.benchDir, o.quick, x.r); err != nil {
			return nil, err
		}
	}
	x.r.finish()
	return x.r, nil
}

// flagsOf repeats the flags that change what is measured.
func flagsOf(o options) string {
	var f []string
	if o.quick {
		f = append(f, "-quick")
	}
	if o.heap {
		f = append(f, "-heap")
	}
	if o.rounds > 0 {
		f = append(f, fmt.Sprint("-rounds ", o.rounds))
	}
	if o.pods > 0 {
		f = append(f, fmt.Sprint("-pods ", o.pods))
	}
	if o.encodings != "" {
		f = append(f, "-encodings "+o.encodings)
	}
	if !o.components {
		f = append(f, "-components=false")
	}
	if o.profileDir != "" {
		f = append(f, "-profile DIR") // profiling changes what is measured
	}
	return strings.Join(f, " ")
}
