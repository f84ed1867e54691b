package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	cgle "k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/leaderelection"
	"github.com/seed31a95821/informer/rest"
	"github.com/seed31a95821/informer/workqueue"
)

// The takeover benchmark: how long a replica that has just won the Lease
// takes to reconcile its first key, with 10,000 pods on the server.
// client-go's usual shape starts the informers in OnStartedLeading and
// its workers after WaitForCacheSync: the new leader lists everything
// first. Ours is a warm standby: the informers ran and synced before the
// election, the workers wait at a leaderelection.Gate, and the first key
// goes through as soon as the term opens. One op is one election won by a
// fresh replica; the figure is win-to-reconcile-ms.
//
//	go test -run '^$' -bench Takeover -count 5 .
const takeoverPods = 10_000

func BenchmarkTakeover(b *testing.B) {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	if err := srv.SeedPods([]string{"default"}, takeoverPods); err != nil {
		b.Fatal(err)
	}
	b.Run("impl=ours-warm-standby", func(b *testing.B) { benchmarkTakeover(b, srv, takeoverOurs) })
	b.Run("impl=client-go", func(b *testing.B) { benchmarkTakeover(b, srv, takeoverClientGo) })
}

// takeover runs one replica on the lease name until ctx ends and returns
// when it won and when it reconciled its first key.
type takeover func(ctx context.Context, srv *fakeapi.Server, lease string) (won, reconciled time.Time, err error)

func benchmarkTakeover(b *testing.B, srv *fakeapi.Server, run takeover) {
	var total time.Duration
	for i := range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		won, reconciled, err := run(ctx, srv, fmt.Sprintf("takeover-%d-%d", time.Now().UnixNano(), i))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		total += reconciled.Sub(won)
	}
	b.ReportMetric(total.Seconds()*1000/float64(b.N), "win-to-reconcile-ms")
}

func takeoverOurs(ctx context.Context, srv *fakeapi.Server, lease string) (won, reconciled time.Time, err error) {
	return ourReplica(ctx, srv, lease, "ours")
}

// ourReplica is a warm standby: informers synced, then the election; it
// returns when it won and when its first key passed the gate.
func ourReplica(ctx context.Context, srv *fakeapi.Server, lease, id string) (won, reconciled time.Time, err error) {
	cfg := rest.Config{Host: srv.URL()}
	factory := informer.NewFactory(cfg, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		return won, reconciled, err
	}
	queue := workqueue.New(workqueue.Options[string]{})
	reg, err := pods.AddEventHandler(informer.EnqueueKeys[*corev1.Pod](queue), informer.HandlerOptions{})
	if err != nil {
		return won, reconciled, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	factory.Start(runCtx)
	defer factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, reg) { // warm before the election, not timed
		return won, reconciled, fmt.Errorf("no sync")
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return won, reconciled, err
	}
	lock, err := leaderelection.NewLeaseLock(c, "default", lease)
	if err != nil {
		return won, reconciled, err
	}
	var gate leaderelection.Gate
	var wonAt time.Time
	e, err := leaderelection.New(leaderelection.Options{Config: leaderelection.Config{Identity: id}, Lock: lock,
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) { wonAt = time.Now(); gate.Lead(ctx) }}})
	if err != nil {
		return won, reconciled, err
	}
	var wg sync.WaitGroup
	wg.Go(func() { e.Run(runCtx) })
	defer wg.Wait()
	defer stop()
	defer queue.ShutDown()
	key, _ := queue.Get()
	_, leave, err := gate.Enter(ctx)
	if err != nil {
		return won, reconciled, err
	}
	reconciled = time.Now() // the first reconcile starts: its key and a synced cache are at hand
	leave()
	queue.Done(key)
	return wonAt, reconciled, nil
}

func takeoverClientGo(ctx context.Context, srv *fakeapi.Server, lease string) (won, reconciled time.Time, err error) {
	return clientGoReplica(ctx, srv, lease, "client-go")
}

// clientGoReplica is client-go's usual shape: the informers start once it
// won; it returns when it won and when its first key was taken.
func clientGoReplica(ctx context.Context, srv *fakeapi.Server, lease, id string) (won, reconciled time.Time, err error) {
	cs, err := kubernetes.NewForConfig(restConfig(srv, wireFormats[1], &requestLog{}))
	if err != nil {
		return won, reconciled, err
	}
	lock := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "default", Name: lease}, Client: cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id}}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	cgle.RunOrDie(runCtx, cgle.LeaderElectionConfig{Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
		RetryPeriod: 2 * time.Second, ReleaseOnCancel: true,
		Callbacks: cgle.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				defer close(done)
				won = time.Now()
				factory := kubeinformers.NewSharedInformerFactory(cs, 0)
				queue := cgworkqueue.NewTypedRateLimitingQueue(cgworkqueue.DefaultTypedControllerRateLimiter[string]())
				defer queue.ShutDown()
				inf := factory.Core().V1().Pods().Informer()
				_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
					if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
						queue.Add(k)
					}
				}})
				factory.Start(ctx.Done())
				defer factory.Shutdown()
				if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
					err = fmt.Errorf("no sync")
					stop()
					return
				}
				key, _ := queue.Get()
				reconciled = time.Now()
				queue.Done(key)
				stop()
			},
			OnStoppedLeading: func() {},
		}})
	<-done
	return won, reconciled, err
}

// The failover benchmark: a leader holds the Lease and dies (its context
// cancelled without a release, as SIGKILL leaves the Lease); how long until
// a standby reconciles its first key, with client-go's default timings
// (lease 15 s, renew 10 s, retry 2 s) and 10,000 pods. The bound we claim
// is LeaseDuration + RetryPeriod + 1 s = 18 s. One op takes that long:
//
//	go test -run '^$' -bench Failover -benchtime 1x -count 2 .
func BenchmarkFailover(b *testing.B) {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	if err := srv.SeedPods([]string{"default"}, takeoverPods); err != nil {
		b.Fatal(err)
	}
	b.Run("impl=ours-warm-standby", func(b *testing.B) { benchmarkFailover(b, srv, ourLeader, ourReplica) })
	b.Run("impl=client-go", func(b *testing.B) { benchmarkFailover(b, srv, clientGoLeader, clientGoReplica) })
}

// leader holds the lease from ready until ctx ends, then stops renewing
// without a release.
type leader func(ctx context.Context, srv *fakeapi.Server, lease string, ready chan<- struct{})

type replica func(ctx context.Context, srv *fakeapi.Server, lease, id string) (won, reconciled time.Time, err error)

func benchmarkFailover(b *testing.B, srv *fakeapi.Server, lead leader, standby replica) {
	var total time.Duration
	for i := range b.N {
		lease := fmt.Sprintf("failover-%d-%d", time.Now().UnixNano(), i)
		leaderCtx, kill := context.WithCancel(context.Background())
		ready := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { lead(leaderCtx, srv, lease, ready) })
		<-ready
		type result struct {
			reconciled time.Time
			err        error
		}
		got := make(chan result, 1)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		wg.Go(func() {
			_, reconciled, err := standby(ctx, srv, lease, "standby")
			got <- result{reconciled, err}
		})
		time.Sleep(3 * time.Second) // the standby is up (and, for ours, synced) before the leader dies
		killed := time.Now()
		kill()
		r := <-got
		cancel()
		wg.Wait()
		if r.err != nil {
			b.Fatal(r.err)
		}
		total += r.reconciled.Sub(killed)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "kill-to-reconcile-s")
}

func ourLeader(ctx context.Context, srv *fakeapi.Server, lease string, ready chan<- struct{}) {
	c, err := client.New(rest.Config{Host: srv.URL()}, client.Options{})
	if err != nil {
		panic(err)
	}
	lock, err := leaderelection.NewLeaseLock(c, "default", lease)
	if err != nil {
		panic(err)
	}
	e, err := leaderelection.New(leaderelection.Options{Config: leaderelection.Config{Identity: "old"}, Lock: lock,
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) { close(ready); <-ctx.Done() }}})
	if err != nil {
		panic(err)
	}
	e.Run(ctx)
}

func clientGoLeader(ctx context.Context, srv *fakeapi.Server, lease string, ready chan<- struct{}) {
	cs, err := kubernetes.NewForConfig(restConfig(srv, wireFormats[1], &requestLog{}))
	if err != nil {
		panic(err)
	}
	lock := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "default", Name: lease}, Client: cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "old"}}
	cgle.RunOrDie(ctx, cgle.LeaderElectionConfig{Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
		RetryPeriod: 2 * time.Second,
		Callbacks:   cgle.LeaderCallbacks{OnStartedLeading: func(ctx context.Context) { close(ready); <-ctx.Done() }, OnStoppedLeading: func() {}}})
}
