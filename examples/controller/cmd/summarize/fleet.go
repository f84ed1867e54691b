package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/seed31a95821/informer/examples/controller"
	"github.com/seed31a95821/informer/leaderelection"
)

// fleetFlags are the flags that run the controller as one replica of a
// fleet (controller.Fleet).
type fleetFlags struct {
	leaderElect   bool
	identity      string
	leaseNS       string
	leaseName     string
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
	trace         bool
	shards        int
}

func (f *fleetFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "run as one replica of several: only the Lease holder reconciles, the others keep warm caches")
	fs.StringVar(&f.identity, "identity", "", "this replica's name in the Lease (default host name and process id)")
	fs.StringVar(&f.leaseNS, "lease-namespace", "default", "namespace of the Lease")
	fs.StringVar(&f.leaseName, "lease-name", "summarize-controller", "name of the Lease")
	fs.DurationVar(&f.leaseDuration, "lease-duration", leaderelection.DefaultLeaseDuration, "how long followers wait after the Lease last changed")
	fs.DurationVar(&f.renewDeadline, "renew-deadline", leaderelection.DefaultRenewDeadline, "how long a leader keeps its authority after its last successful renew")
	fs.DurationVar(&f.retryPeriod, "retry-period", leaderelection.DefaultRetryPeriod, "time between attempts to acquire or renew")
	fs.IntVar(&f.shards, "shards", 0, "with -leader-elect: split the keys over this many shard Leases, every replica working on its share")
	fs.BoolVar(&f.trace, "trace", false, "print one line per reconcile on stdout: reconcile <identity> <key> <start ns> <end ns>; "+
		"and one per shard taken or given up: shard <identity> <shard> held|released <ns>")
}

// apply sets the fleet options the flags ask for.
func (f *fleetFlags) apply(opts *controller.Options) error {
	id := f.identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return err
		}
		id = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if f.trace {
		var mu sync.Mutex // one line at a time
		opts.Trace = func(key string, start, end time.Time) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Printf("reconcile %s %s %d %d\n", id, key, start.UnixNano(), end.UnixNano())
		}
	}
	if !f.leaderElect {
		return nil
	}
	opts.Fleet = &controller.Fleet{Identity: id, LeaseNamespace: f.leaseNS, LeaseName: f.leaseName, Shards: f.shards,
		Timing: leaderelection.Config{LeaseDuration: f.leaseDuration, RenewDeadline: f.renewDeadline, RetryPeriod: f.retryPeriod}}
	if f.trace {
		opts.Fleet.OnHeld = func(shard int, held bool) {
			state := map[bool]string{true: "held", false: "released"}[held]
			fmt.Printf("shard %s %d %s %d\n", id, shard, state, time.Now().UnixNano())
		}
	}
	return nil
}
