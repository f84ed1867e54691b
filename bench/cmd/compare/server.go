package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/internal/realpod"
)

// cluster is the parent's fakeapi server and what it was seeded with.
type cluster struct {
	srv  *fakeapi.Server
	pods int
	cm   int // config maps written to move the resourceVersion on
	// pod is the generator grow seeds with: realpod.New, or realpod.Mixed
	// for the unique-template population.
	pod func(int) *corev1.Pod
}

// newCluster starts a server whose history keeps the last window writes
// (plan.window). Each write's event holds the pod it wrote and the one it
// replaced, about 12 KB each: a history of every write, as the 100k plan
// once kept, held tens of GB after a few churns of 100k pods.
func newCluster(window int) (*cluster, error) {
	srv, err := fakeapi.NewServer(fakeapi.Options{
		// Bookmarks would move a watcher's resourceVersion past a
		// compaction and spare it the relist the scenario is about; the
		// history must hold every backlog without compacting on its own.
		BookmarkInterval: time.Hour,
		CompactionWindow: window,
		// The records of writes and sent events are for tests' checkers;
		// nothing here reads them, and they would keep every pod written.
		HistoryLimit: -1,
	})
	if err != nil {
		return nil, err
	}
	return &cluster{srv: srv, pod: realpod.New}, nil
}

// spawn starts a side on this cluster, when no other informer watches it.
// The history before now is then needed by no one (the new informer lists
// first), so it is compacted: between steps the server holds its pods
// only, not the versions the last steps wrote. Both sides meet the same
// server: every child is started this way.
func (c *cluster) spawn(ctx context.Context, cfg sideConfig) (*childProc, error) {
	c.srv.Compact()
	cfg.URL = c.srv.URL()
	return spawn(ctx, cfg)
}

// grow seeds realistic pods until the server holds n.
func (c *cluster) grow(n int) error {
	for ; c.pods < n; c.pods++ {
		if _, err := c.srv.Create(c.pod(c.pods)); err != nil {
			return fmt.Errorf("seeding pod %d: %w", c.pods, err)
		}
	}
	return nil
}

// forceRelist moves the resourceVersion on (a ConfigMap, so that no pod
// changes), compacts the history and drops every watch: each informer's
// re-watch from its last resourceVersion gets 410 Expired and relists.
func (c *cluster) forceRelist() error {
	c.cm++
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("relist-", c.cm)}}
	if _, err := c.srv.Create(cm); err != nil {
		return err
	}
	c.srv.Compact()
	c.srv.DropWatches()
	return nil
}

// writeUpdates updates m pods (round-robin over the seeded ones), each
// stamped with the time of its write, and returns when the first was
// written: the burst is available to the informer from then on.
func (c *cluster) writeUpdates(m, round int) (time.Time, error) {
	start := time.Now()
	for i := range m {
		p := realpod.New(i % c.pods)
		p.Annotations[writtenAt] = strconv.FormatInt(time.Now().UnixNano(), 10)
		p.Annotations["bench.informer/round"] = strconv.Itoa(round)
		if _, err := c.srv.Update(p); err != nil {
			return start, fmt.Errorf("updating pod %d: %w", i, err)
		}
	}
	return start, nil
}

// buildBacklog holds every pod watch (fakeapi's HoldWatches), writes m
// updates and waits until the server has encoded them all: the backlog is
// then ready, as bytes waiting in a buffering proxy would be, and
// releaseBacklog lets the informer drain it at its own pace. With a plain
// stall the server would encode each event as it sent it, and the drain
// would measure the server's encoder as much as the informer.
func (c *cluster) buildBacklog(ctx context.Context, m, round int) error {
	c.srv.Faults().HoldWatches("pods")
	if _, err := c.writeUpdates(m, round); err != nil {
		return err
	}
	if err := waitFor(ctx, func() bool { return c.srv.Faults().HeldFrames("pods") >= int64(m) }); err != nil {
		return fmt.Errorf("backlog: %d of %d updates encoded: %w", c.srv.Faults().HeldFrames("pods"), m, err)
	}
	return nil
}

// releaseBacklog releases the backlog at once, and returns the moment of
// the release.
func (c *cluster) releaseBacklog() (time.Time, error) {
	released := time.Now()
	c.srv.Faults().ResumeWatches("pods")
	return released, nil
}

// churn updates every seeded pod once, in an order fixed by round, with
// the status a kubelet writes after a container restart (restarted), and
// returns when the first was written.
func (c *cluster) churn(round int) (time.Time, error) {
	start := time.Now()
	for _, i := range churnOrder(c.pods, round) {
		if _, err := c.srv.Update(restarted(c.pod, i, round, time.Now())); err != nil {
			return start, fmt.Errorf("churning pod %d: %w", i, err)
		}
	}
	return start, nil
}
