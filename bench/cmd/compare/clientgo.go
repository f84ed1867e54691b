package main

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// clientGo is client-go's shared informer factory, as a controller uses it.
type clientGo struct {
	cfg     sideConfig
	factory informers.SharedInformerFactory
	inf     cache.SharedIndexInformer
}

func newClientGo(cfg sideConfig) *clientGo {
	rc := &rest.Config{Host: cfg.URL, QPS: 1000, Burst: 1000}
	// Typed clients default to protobuf; both sides name the format.
	rc.ContentType = contentType(cfg.Encoding)
	rc.AcceptContentTypes = contentType(cfg.Encoding)
	cs := kubernetes.NewForConfigOrDie(rc)
	var opts []informers.SharedInformerOption
	if cfg.Strip {
		opts = append(opts, informers.WithTransform(stripManagedFields))
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
	return &clientGo{cfg: cfg, factory: f, inf: f.Core().V1().Pods().Informer()}
}

// stripManagedFields is what a client-go user writes for
// informer.StripManagedFields.
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

func (c *clientGo) start(ctx context.Context, rec *recorder) (<-chan struct{}, error) {
	for i := range max(c.cfg.Handlers, 1) {
		h := cache.ResourceEventHandlerFuncs{}
		switch {
		case i == 0:
			h.UpdateFunc = func(old, cur any) { rec.update(old.(*corev1.Pod), cur.(*corev1.Pod)) }
		case c.cfg.Slow && i == c.cfg.Handlers-1:
			h.UpdateFunc = func(any, any) { time.Sleep(slowHandler) }
		}
		if _, err := c.inf.AddEventHandler(h); err != nil {
			return nil, err
		}
	}
	c.factory.Start(ctx.Done())
	// cache.WaitForCacheSync polls every 100 ms, which would add up to
	// 100 ms to client-go's time; a millisecond poll adds at most that.
	synced := make(chan struct{})
	go func() {
		if waitFor(ctx, c.inf.HasSynced) == nil {
			close(synced)
		}
	}()
	return synced, nil
}

func (c *clientGo) cached() int { return len(c.inf.GetStore().ListKeys()) }

func (c *clientGo) relistArm() {}

func (c *clientGo) relistDone(rec *recorder, n int) bool { return rec.unchanged.Load() >= int64(n) }
