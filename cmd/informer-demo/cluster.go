package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"
)

// cluster is what the dashboard watches: a real one from a kubeconfig, or the
// embedded fake server with its churn generator.
type cluster struct {
	config rest.Config
	srv    *fakeapi.Server // nil for a real cluster
	churn  *churn          // nil for a real cluster
}

func connect(ctx context.Context, c config, out io.Writer) (*cluster, error) {
	if c.kubeconfig != "" {
		// A list, as $KUBECONFIG is: "a:b" merges the files kubectl's way.
		l, err := kubeconfig.LoadingRules{Paths: filepath.SplitList(c.kubeconfig), Context: c.context}.Load()
		if err != nil {
			return nil, err
		}
		cfg := l.Config
		cfg.UserAgent = "informer-demo"
		fmt.Fprintf(out, "watching %s, context %q from %v (read-only)\n", cfg.Host, l.Context, l.Files)
		return &cluster{config: cfg}, nil
	}
	srv, err := fakeapi.NewServer(fakeapi.Options{BookmarkInterval: demoBookmarkInterval})
	if err != nil {
		return nil, err
	}
	namespaces := []string{"shop", "blog", "payments", "search"}
	if err := srv.SeedPods(namespaces, c.pods); err != nil {
		srv.Close()
		return nil, err
	}
	for i := range c.services {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
			Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("svc-%03d", i),
		}}
		if _, err := srv.Create(svc); err != nil {
			srv.Close()
			return nil, err
		}
	}
	fmt.Fprintf(out, "fake API server at %s with %d pods and %d services; churn %d writes/s (seed %d)\n",
		srv.URL(), c.pods, c.services, c.churn, c.seed)
	cl := &cluster{config: rest.Config{Host: srv.URL(), UserAgent: "informer-demo"}, srv: srv}
	if c.churn > 0 {
		cl.churn = newChurn(srv, namespaces, c.churn, c.seed)
	}
	return cl, nil
}

// demoBookmarkInterval is the embedded server's bookmark interval, and what
// the informers expect of it: a few seconds instead of a real server's
// minute, so that the watchdog, which restarts a watch silent for three
// intervals, acts within the time a learner watches the "stall" button.
const demoBookmarkInterval = 2 * time.Second

// factoryOptions tunes the informers to the server: the defaults for a real
// cluster, the embedded server's bookmark interval for the fake.
func (c *cluster) factoryOptions() informer.FactoryOptions {
	var opts informer.FactoryOptions
	if c.srv != nil {
		opts.Informer.Reflector.BookmarkInterval = demoBookmarkInterval
	}
	return opts
}

// describe names the server for the views.
func (c *cluster) describe() string {
	if c.srv != nil {
		return "the embedded fake API server at " + c.srv.URL()
	}
	return c.config.Host
}

// serverRV reads the embedded server's resourceVersion; nil for a real
// cluster, whose position the demo does not ask for.
func (c *cluster) serverRV() func() uint64 {
	if c.srv == nil {
		return nil
	}
	return c.srv.ResourceVersion
}

func (c *cluster) close() {
	if c.srv != nil {
		c.srv.Close()
	}
}
