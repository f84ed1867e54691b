package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"
)

// The fleet proofs run the example controller (examples/controller/cmd/summarize)
// as separate OS processes, so that SIGKILL, SIGSTOP/SIGCONT and SIGTERM act
// on real processes. Every replica prints a line per reconcile and per
// shard it takes or gives up (-trace); the observer below collects them and
// the tests assert on the timeline. The timings are shortened (lease 3 s,
// renew deadline 2 s, retry 500 ms) so a run takes seconds; the rule is the
// same at any scale, and leaderelection's synctest tests cover the defaults.
var fleetTimingFlags = []string{"-lease-duration", "3s", "-renew-deadline", "2s", "-retry-period", "500ms"}

const (
	fleetLease = 3 * time.Second
	fleetRenew = 2 * time.Second
	fleetRetry = 500 * time.Millisecond
)

func TestFleetProcessesRealAPI(t *testing.T) {
	cluster := realapi.Start(t)
	t.Run("leader", func(t *testing.T) { checkFleetLeader(t, cluster.Kubeconfig) })
	t.Run("shards", func(t *testing.T) { checkFleetShards(t, cluster.Kubeconfig) })
}

func TestFleetProcessesFakeAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example controller and runs it as processes")
	}
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfigPath, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: %q}}]
users: [{name: fake, user: {}}]
contexts: [{name: fake, context: {cluster: fake, user: fake}}]
current-context: fake
`, srv.URL())), 0o600))
	t.Run("leader", func(t *testing.T) { checkFleetLeader(t, kubeconfigPath) })
	t.Run("shards", func(t *testing.T) { checkFleetShards(t, kubeconfigPath) })
}

// fleetObserver collects what the replicas print.
type fleetObserver struct {
	mu      sync.Mutex // guards the rest
	spans   []fleetSpan
	leads   map[string][]time.Time // identity -> when it logged "leads"
	shards  []shardEvent
	started map[string]*exec.Cmd
}

type fleetSpan struct {
	id, key    string
	start, end time.Time
}

type shardEvent struct {
	id    string
	shard int
	held  bool
	at    time.Time
}

// summarizeBinary builds the example controller once per test binary.
var summarizeBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "fleet-summarize")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "summarize")
	out, err := exec.Command("go", "build", "-o", bin, "../examples/controller/cmd/summarize").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// start runs one replica; it is killed when the test ends if still running.
func (o *fleetObserver) start(t *testing.T, kubeconfigPath, id string, extra ...string) *exec.Cmd {
	t.Helper()
	bin, err := summarizeBinary()
	require.NoError(t, err)
	args := append([]string{"-kubeconfig", kubeconfigPath, "-namespace", "fleet", "-leader-elect", "-identity", id, "-trace",
		"-lease-name", "fleet-" + t.Name()[strings.LastIndex(t.Name(), "/")+1:]}, fleetTimingFlags...)
	cmd := exec.Command(bin, append(args, extra...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var readers sync.WaitGroup
	readers.Go(func() { o.readTrace(stdout) })
	readers.Go(func() { o.readLog(t, id, stderr) })
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		readers.Wait()
		_ = cmd.Wait()
	})
	o.mu.Lock()
	o.started[id] = cmd
	o.mu.Unlock()
	return cmd
}

func (o *fleetObserver) readTrace(r io.Reader) {
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		o.mu.Lock()
		switch {
		case len(f) == 5 && f[0] == "reconcile":
			start, _ := strconv.ParseInt(f[3], 10, 64)
			end, _ := strconv.ParseInt(f[4], 10, 64)
			o.spans = append(o.spans, fleetSpan{id: f[1], key: f[2], start: time.Unix(0, start), end: time.Unix(0, end)})
		case len(f) == 5 && f[0] == "shard":
			s, _ := strconv.Atoi(f[2])
			at, _ := strconv.ParseInt(f[4], 10, 64)
			o.shards = append(o.shards, shardEvent{id: f[1], shard: s, held: f[3] == "held", at: time.Unix(0, at)})
		}
		o.mu.Unlock()
	}
}

func (o *fleetObserver) readLog(t *testing.T, id string, r io.Reader) {
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		line := lines.Text()
		if strings.Contains(line, `msg="controller: `+id+` leads"`) {
			o.mu.Lock()
			o.leads[id] = append(o.leads[id], time.Now())
			o.mu.Unlock()
		}
	}
}

// waitFor polls cond until it holds or within passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstReconcileAfter returns the first reconcile start by someone other
// than not, after at.
func (o *fleetObserver) firstReconcileAfter(at time.Time, not ...string) (fleetSpan, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var best fleetSpan
	found := false
	for _, s := range o.spans {
		if s.start.After(at) && !containsString(not, s.id) && (!found || s.start.Before(best.start)) {
			best, found = s, true
		}
	}
	return best, found
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// leaderSince returns who logged "leads" after at, other than not.
func (o *fleetObserver) leaderSince(at time.Time, not ...string) (string, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, times := range o.leads {
		for _, ts := range times {
			if ts.After(at) && !containsString(not, id) {
				return id, ts
			}
		}
	}
	return "", time.Time{}
}

// requireNoOverlap asserts no key was reconciled by two replicas in
// overlapping windows, except a span of paused that began before pausedAt
// (the documented fencing limit: a reconcile caught by SIGSTOP).
func (o *fleetObserver) requireNoOverlap(t *testing.T, paused string, pausedAt time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	byKey := map[string][]fleetSpan{}
	for _, s := range o.spans {
		byKey[s.key] = append(byKey[s.key], s)
	}
	excused := func(s fleetSpan) bool { return s.id == paused && s.start.Before(pausedAt) && s.end.After(pausedAt) }
	for key, ss := range byKey {
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				if a.id != b.id && a.start.Before(b.end) && b.start.Before(a.end) && !excused(a) && !excused(b) {
					t.Errorf("%s reconciled by %s [%v, %v] and %s [%v, %v]", key, a.id, a.start, a.end, b.id, b.start, b.end)
				}
			}
		}
	}
}

// fleetWriter keeps changing pods in namespace fleet so that the leader
// always has keys to reconcile, until ctx ends.
func fleetWriter(ctx context.Context, t *testing.T, cfg rest.Config, deployments int) {
	c := newRealClient(t, cfg)
	pods := forType[*corev1.Pod](t, c)
	for i := 0; ctx.Err() == nil; i++ {
		app := fmt.Sprint("app-", i%deployments)
		p := realPausePod(fmt.Sprint("p-", i), map[string]string{"app": app})
		p.Namespace = "fleet"
		_, _ = pods.Create(ctx, p, metav1.CreateOptions{})
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func setUpFleetNamespace(t *testing.T, cfg rest.Config, deployments int) {
	ctx := context.Background()
	c := newRealClient(t, cfg)
	_, err := forType[*corev1.Namespace](t, c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		require.NoError(t, err)
	}
	ds := forType[*appsv1.Deployment](t, c)
	existing, _, err := ds.List(ctx, "fleet", metav1.ListOptions{})
	require.NoError(t, err)
	for i := len(existing); i < deployments; i++ {
		labels := map[string]string{"app": fmt.Sprint("app-", i)}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: fmt.Sprint("d-", i)},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}
		_, err := ds.Create(ctx, d, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// checkFleetLeader: three replicas; SIGKILL the leader; SIGSTOP the next
// one for longer than the lease, then SIGCONT; SIGTERM the third leader.
func checkFleetLeader(t *testing.T, kubeconfigPath string) {
	cfg, err := kubeconfig.LoadKubeconfig(kubeconfigPath)
	require.NoError(t, err)
	setUpFleetNamespace(t, cfg, 20)
	ctx, cancel := context.WithCancel(context.Background())
	var writer sync.WaitGroup
	writer.Go(func() { fleetWriter(ctx, t, cfg, 20) })
	defer func() { cancel(); writer.Wait() }()

	o := &fleetObserver{leads: map[string][]time.Time{}, started: map[string]*exec.Cmd{}}
	begin := time.Now()
	for _, id := range []string{"a", "b", "c"} {
		o.start(t, kubeconfigPath, id)
	}
	var first string
	waitFor(t, 30*time.Second, "a first leader", func() bool { first, _ = o.leaderSince(begin); return first != "" })

	// SIGKILL: the successor's first reconcile within lease + retry + 1 s.
	waitFor(t, 10*time.Second, "the leader reconciles", func() bool { _, ok := o.firstReconcileAfter(begin); return ok })
	killed := time.Now()
	require.NoError(t, o.started[first].Process.Signal(syscall.SIGKILL))
	var second fleetSpan
	waitFor(t, fleetLease+fleetRetry+time.Second, "a reconcile by a successor after SIGKILL", func() bool {
		var ok bool
		second, ok = o.firstReconcileAfter(killed, first)
		return ok
	})
	t.Logf("figure: SIGKILL of %s -> first reconcile by %s: %v", first, second.id, second.start.Sub(killed))

	// SIGSTOP the new leader longer than the lease; someone else leads;
	// after SIGCONT the paused one does not start a reconcile again.
	paused := second.id
	time.Sleep(time.Second)
	pausedAt := time.Now()
	require.NoError(t, o.started[paused].Process.Signal(syscall.SIGSTOP))
	var third string
	waitFor(t, fleetLease+fleetRetry+time.Second, "a leader while "+paused+" is stopped", func() bool {
		third, _ = o.leaderSince(pausedAt, first, paused)
		return third != ""
	})
	time.Sleep(fleetLease + time.Second - time.Since(pausedAt))
	resumed := time.Now()
	require.NoError(t, o.started[paused].Process.Signal(syscall.SIGCONT))
	time.Sleep(2 * time.Second)
	o.mu.Lock()
	for _, s := range o.spans {
		require.False(t, s.id == paused && s.start.After(pausedAt), "the paused ex-leader started a reconcile after SIGCONT: %v (resumed %v)", s, resumed)
	}
	o.mu.Unlock()

	// SIGTERM: the leader releases; a successor leads within retry + 1 s.
	termAt := time.Now()
	require.NoError(t, o.started[third].Process.Signal(syscall.SIGTERM))
	var fourth string
	var fourthAt time.Time
	waitFor(t, fleetRetry+time.Second, "a leader after SIGTERM", func() bool {
		fourth, fourthAt = o.leaderSince(termAt, first, third)
		return fourth != ""
	})
	t.Logf("figure: SIGTERM of %s -> %s leads: %v", third, fourth, fourthAt.Sub(termAt))
	time.Sleep(time.Second)
	cancel()
	writer.Wait()
	o.requireNoOverlap(t, paused, pausedAt)
}

// checkFleetShards: three replicas split 1,000 Deployments over 8 shards;
// SIGKILL one: its shards are taken within lease + retry; a fourth joins
// and the shards rebalance; no key reconciled by two at once.
func checkFleetShards(t *testing.T, kubeconfigPath string) {
	cfg, err := kubeconfig.LoadKubeconfig(kubeconfigPath)
	require.NoError(t, err)
	setUpFleetNamespace(t, cfg, 1000)
	o := &fleetObserver{leads: map[string][]time.Time{}, started: map[string]*exec.Cmd{}}
	const shards = 8
	holders := func() map[int]string {
		o.mu.Lock()
		defer o.mu.Unlock()
		out := map[int]string{}
		for _, e := range o.shards {
			if e.held {
				out[e.shard] = e.id
			} else if out[e.shard] == e.id {
				delete(out, e.shard)
			}
		}
		return out
	}
	for _, id := range []string{"s1", "s2", "s3"} {
		o.start(t, kubeconfigPath, id, "-shards", strconv.Itoa(shards))
	}
	count := func(h map[int]string, id string) int {
		n := 0
		for _, who := range h {
			if who == id {
				n++
			}
		}
		return n
	}
	waitFor(t, 60*time.Second, "a fair split of 8 shards over 3", func() bool {
		h := holders()
		return len(h) == shards && count(h, "s1") >= 2 && count(h, "s2") >= 2 && count(h, "s3") >= 2
	})
	waitFor(t, 60*time.Second, "every deployment reconciled", func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		seen := map[string]bool{}
		for _, s := range o.spans {
			seen[s.key] = true
		}
		return len(seen) >= 1000
	})

	killed := time.Now()
	require.NoError(t, o.started["s3"].Process.Signal(syscall.SIGKILL))
	// Its shards' holders are still "s3" in the log (it printed no release):
	// wait until the others hold all shards.
	waitFor(t, fleetLease+fleetRetry+time.Second, "s3's shards taken", func() bool {
		h := holders()
		n := 0
		for _, who := range h {
			if who == "s1" || who == "s2" {
				n++
			}
		}
		return n == shards
	})
	t.Logf("figure: SIGKILL of s3 -> all its shards taken: %v", time.Since(killed))

	joined := time.Now()
	o.start(t, kubeconfigPath, "s4", "-shards", strconv.Itoa(shards))
	waitFor(t, 30*time.Second, "s4 takes its share", func() bool {
		h := holders()
		return count(h, "s4") == 2 && count(h, "s1")+count(h, "s2") == 6
	})
	t.Logf("figure: s4 joined -> holds its 2 shards: %v", time.Since(joined))
	o.requireNoOverlap(t, "", time.Time{})
}
