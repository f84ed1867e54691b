package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/fakeapi"
)

// churn writes to the fake server at a steady rate: mostly updates of
// existing pods, some creates and deletes, so the informers have something to
// do. It uses the server's Go API; a real controller would write over HTTP.
type churn struct {
	srv        *fakeapi.Server
	namespaces []string
	perSecond  int
	rng        *rand.Rand
	done       sync.WaitGroup // counts the writing goroutine
	// created and next belong to the writing goroutine.
	created []string // keys of pods churn created: the ones it updates and deletes
	next    int
}

func newChurn(srv *fakeapi.Server, namespaces []string, perSecond int, seed int64) *churn {
	return &churn{srv: srv, namespaces: namespaces, perSecond: perSecond, rng: rand.New(rand.NewPCG(uint64(seed), 0))}
}

// start writes on its own goroutine until ctx is done; wait waits for it.
func (c *churn) start(ctx context.Context) { c.done.Go(func() { c.run(ctx) }) }

// run writes until ctx is done, in ticks of 10ms.
func (c *churn) run(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			for range c.writesAtTick(n) {
				c.step()
			}
		}
	}
}

// writesAtTick is how many writes the n-th tick (from 0) makes: the writes
// due by its end minus those due by the previous one, so that any rate is
// kept exactly, not rounded to a multiple of the 100 ticks a second.
func (c *churn) writesAtTick(n int) int {
	return c.perSecond*(n+1)/100 - c.perSecond*n/100
}

func (c *churn) wait() { c.done.Wait() }

// step makes one write: 70% update, 15% create, 15% delete. As many pods
// come as go, so the cluster stays near its seeded size however long the
// demo runs: what churn created is a random walk that strays by about the
// square root of its creates and deletes (about 600 pods on average after
// an hour at 300 writes a second), not a heap that grows by a tenth of
// every write (108,000 pods in that hour).
func (c *churn) step() {
	ns := c.namespaces[c.rng.IntN(len(c.namespaces))]
	switch r := c.rng.IntN(20); {
	case r < 3 || len(c.created) == 0:
		name := fmt.Sprintf("churn-%06d", c.next)
		c.next++
		if _, err := c.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err == nil {
			c.created = append(c.created, ns+"/"+name)
		}
	case r < 6:
		i := c.rng.IntN(len(c.created))
		key := c.created[i]
		c.created = append(c.created[:i], c.created[i+1:]...)
		ns, name := splitKey(key)
		_ = c.srv.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	default:
		key := c.created[c.rng.IntN(len(c.created))]
		ns, name := splitKey(key)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{"generation": fmt.Sprint(c.rng.IntN(1000))}}}
		_, _ = c.srv.Update(p) // unconditional: no resourceVersion, so no conflict
	}
}

func splitKey(key string) (ns, name string) {
	for i := range len(key) {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
