package informer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/reflector"
)

// client-go's most common index definition is "namespace":
// MetaNamespaceIndexFunc. Here "namespace" (and "labels") are built in, and
// a user index of the same name cannot be set up. Such an informer must say
// so where the caller hears it, and must never claim a cache it could not
// fill.

func TestFactoryRefusesAnIndexNamedLikeABuiltIn(t *testing.T) {
	for _, name := range []string{indexer.NamespaceIndex, indexer.LabelIndex} {
		t.Run(name, func(t *testing.T) {
			opts := informer.FactoryOptions{}
			opts.Informer.Indexers = indexer.Indexers{name: indexer.NamespaceIndexFunc}
			e := newEnv(t, opts, pod("shop", "a", nil))
			_, err := informer.For[*corev1.Pod](e.factory)
			require.ErrorIs(t, err, indexer.ErrIndexExists)
			_, err = informer.ForMetadata(e.factory, corev1.SchemeGroupVersion.WithResource("pods"), false)
			require.ErrorIs(t, err, indexer.ErrIndexExists)
		})
	}
}

// onePod serves one pod, and watches that stay open until Run ends.
func onePod() *reflector.ListWatch {
	return &reflector.ListWatch{
		NoWatchList: true,
		ListFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			p := pod("shop", "a", nil)
			p.ResourceVersion = "5"
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []corev1.Pod{*p}}, nil
		},
		WatchFunc: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
}

func TestInformerWithAnIndexNamedLikeABuiltInNeverSyncs(t *testing.T) {
	errs := &errorLog{}
	inf := informer.New[*corev1.Pod](onePod(), informer.Options{
		Name:     "pods",
		Indexers: indexer.Indexers{indexer.NamespaceIndex: indexer.NamespaceIndexFunc},
		OnError:  errs.add,
	})
	// Run must give up on its own; the deadline only bounds a Run that
	// does not (and is long enough for one that did run to sync).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := inf.Run(ctx)
	require.ErrorIs(t, err, indexer.ErrIndexExists)
	require.NoError(t, ctx.Err(), "Run returned at once")
	require.False(t, inf.HasSynced())
	require.Len(t, errs.all(), 1, "reported once: %v", errs.all())
	require.ErrorIs(t, errs.all()[0], indexer.ErrIndexExists)
}

// A first state the cache failed to take in full (here an index function
// fails for one pod) is no synced cache: the informer syncs once the pod
// lands.
func TestInformerDoesNotSyncUntilTheCacheHoldsTheFirstState(t *testing.T) {
	errNoOwner := errors.New("no owner label")
	byOwner := func(obj runtime.Object) ([]string, error) {
		p := obj.(*corev1.Pod)
		if p.Labels["owner"] == "" {
			return nil, errNoOwner
		}
		return []string{p.Labels["owner"]}, nil
	}
	opts := informer.FactoryOptions{}
	opts.Informer.Indexers = indexer.Indexers{"owner": byOwner}
	e := newEnv(t, opts, pod("shop", "good", map[string]string{"owner": "x"}), pod("shop", "bad", nil))
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	e.factory.Start(e.ctx)

	// A pod created later reaches the cache after the first state was
	// applied: by then a sync would have been reported.
	require.Eventually(t, func() bool { return len(e.errs.all()) > 0 }, waitFor, 5*time.Millisecond)
	_, err = e.srv.Create(pod("shop", "later", map[string]string{"owner": "y"}))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, ok := pods.Indexer().Get("shop/later")
		return ok
	}, waitFor, 5*time.Millisecond)
	require.False(t, pods.HasSynced(), "the cache holds %v of the first state", pods.Indexer().ListKeys())
	require.ErrorIs(t, e.errs.all()[0], errNoOwner)

	// The pod gets its label; the cache takes it, and the informer syncs.
	fixed := pod("shop", "bad", map[string]string{"owner": "z"})
	_, err = e.srv.Update(fixed)
	require.NoError(t, err)
	require.True(t, informer.WaitForCacheSync(e.ctx, pods))
	require.ElementsMatch(t, []string{"shop/good", "shop/bad", "shop/later"}, pods.Indexer().ListKeys())
}

// With AtomicRelist the first state lands as one Replace, all or nothing:
// one pod the index refuses keeps all of it out, and the informer does not
// sync on an empty cache.
func TestAtomicInformerDoesNotSyncWhenTheFirstStateIsRefused(t *testing.T) {
	errNoOwner := errors.New("no owner label")
	opts := informer.FactoryOptions{}
	opts.Informer.AtomicRelist = true
	opts.Informer.Indexers = indexer.Indexers{"owner": func(obj runtime.Object) ([]string, error) {
		if owner := obj.(*corev1.Pod).Labels["owner"]; owner != "" {
			return []string{owner}, nil
		}
		return nil, errNoOwner
	}}
	e := newEnv(t, opts, pod("shop", "good", map[string]string{"owner": "x"}), pod("shop", "bad", nil))
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	e.factory.Start(e.ctx)
	require.Eventually(t, func() bool { return len(e.errs.all()) > 0 }, waitFor, 5*time.Millisecond)
	_, err = e.srv.Create(pod("shop", "later", map[string]string{"owner": "y"}))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, ok := pods.Indexer().Get("shop/later")
		return ok
	}, waitFor, 5*time.Millisecond)
	require.False(t, pods.HasSynced(), "the cache holds %v of the first state", pods.Indexer().ListKeys())
	require.ErrorIs(t, e.errs.all()[0], errNoOwner)
}
