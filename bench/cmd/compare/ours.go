package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
)

// ours is this project's informer.
type ours struct {
	cfg     sideConfig
	factory *informer.Factory
	inf     *informer.SharedInformer[*corev1.Pod]
	relists int64 // before the relist being measured
}

func newOurs(cfg sideConfig) *ours {
	opts := informer.FactoryOptions{}
	if cfg.Strip {
		opts.Informer.Transform = informer.StripManagedFields()
	}
	opts.Informer.OnError = func(error) {} // a relist's 410 is expected here
	wc := rest.Config{Host: cfg.URL, ContentType: contentType(cfg.Encoding)}
	return &ours{cfg: cfg, factory: informer.NewFactory(wc, opts)}
}

func (o *ours) start(ctx context.Context, rec *recorder) (<-chan struct{}, error) {
	inf, err := informer.For[*corev1.Pod](o.factory)
	if err != nil {
		return nil, err
	}
	o.inf = inf
	for i := range max(o.cfg.Handlers, 1) {
		h := informer.Handler[*corev1.Pod]{OnUpdate: func(*corev1.Pod, *corev1.Pod) {}}
		switch {
		case i == 0:
			h.OnUpdate = rec.update
		case o.cfg.Slow && i == o.cfg.Handlers-1:
			h.OnUpdate = func(*corev1.Pod, *corev1.Pod) { time.Sleep(slowHandler) }
		}
		if _, err := inf.AddEventHandler(h, informer.HandlerOptions{Name: fmt.Sprint("h", i)}); err != nil {
			return nil, err
		}
	}
	o.factory.Start(ctx)
	return inf.Synced(), nil
}

func (o *ours) cached() int { return len(o.inf.Indexer().ListKeys()) }

func contentType(encoding string) string {
	if encoding == "protobuf" {
		return rest.ContentTypeProtobuf
	}
	return rest.ContentTypeJSON
}

func (o *ours) relistArm() { o.relists = o.inf.Stats().Relists }

func (o *ours) relistDone(*recorder, int) bool {
	return o.inf.Stats().Relists > o.relists && o.inf.QueueStats().Depth == 0
}
