package lister

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/indexer"
)

// byNode is an index of pods by node, for ByIndex.
var byNode = indexer.Indexers{"node": func(obj runtime.Object) ([]string, error) {
	return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
}}

// namespaceCache is a cache of pods of one namespace, on node n1 unless
// their name says "@n2".
func namespaceCache(t *testing.T, pods ...*corev1.Pod) *indexer.Indexer {
	t.Helper()
	x := indexer.New(byNode)
	for _, p := range pods {
		p.Spec.NodeName = "n1"
		if p.Labels["node"] == "n2" {
			p.Spec.NodeName = "n2"
		}
		require.NoError(t, x.Add(keyOf(p), p))
	}
	return x
}

// TestListerByNamespace: a Lister over one cache per namespace reads one
// namespace from its cache alone, merges the caches for the rest, and
// treats a namespace it has no cache for as empty.
func TestListerByNamespace(t *testing.T) {
	a := namespaceCache(t, pod("a", "web-1", "app=web"), pod("a", "db-1", "app=db,node=n2"))
	b := namespaceCache(t, pod("b", "web-2", "app=web,node=n2"))
	l := NewByNamespace[*corev1.Pod](map[string]*indexer.Indexer{"a": a, "b": b, "c": nil},
		Options{Resource: schema.GroupResource{Resource: "pods"}})
	web := labels.SelectorFromSet(labels.Set{"app": "web"})

	for _, tc := range []struct {
		name string
		list func() ([]*corev1.Pod, error)
		want []string
	}{
		{"List merges", func() ([]*corev1.Pod, error) { return l.List(labels.Everything()) }, []string{"a/db-1", "a/web-1", "b/web-2"}},
		{"List by label merges", func() ([]*corev1.Pod, error) { return l.List(web) }, []string{"a/web-1", "b/web-2"}},
		{`Namespace("") is List`, func() ([]*corev1.Pod, error) { return l.Namespace("").List(nil) }, []string{"a/db-1", "a/web-1", "b/web-2"}},
		{"one namespace", func() ([]*corev1.Pod, error) { return l.Namespace("a").List(labels.Everything()) }, []string{"a/db-1", "a/web-1"}},
		{"one namespace by label", func() ([]*corev1.Pod, error) { return l.Namespace("b").List(web) }, []string{"b/web-2"}},
		{"a namespace without a cache", func() ([]*corev1.Pod, error) { return l.Namespace("c").List(nil) }, []string{}},
		{"ByIndex merges", func() ([]*corev1.Pod, error) { return l.ByIndex("node", "n2") }, []string{"a/db-1", "b/web-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.list()
			require.NoError(t, err)
			require.NotNil(t, got, "an empty answer is an empty slice")
			require.Equal(t, tc.want, podNames(got))
		})
	}

	got, err := l.Namespace("b").Get("web-2")
	require.NoError(t, err)
	require.Equal(t, "b/web-2", keyOf(got))
	for _, missing := range [][2]string{{"a", "web-2"}, {"c", "web-1"}, {"", "web-1"}} {
		_, err := l.Get(missing[0], missing[1])
		require.True(t, apierrors.IsNotFound(err), "%v: %v", missing, err)
	}
	_, err = l.ByIndex("nope", "n1")
	require.Error(t, err, "an index the caches lack")
	_, err = NewByNamespace[*corev1.Service](map[string]*indexer.Indexer{"a": a}, Options{}).List(nil)
	var typeErr *TypeError
	require.ErrorAs(t, err, &typeErr)
}

// BenchmarkNamespaceList reads one namespace of 10 (1,000 pods of 10,000)
// from one cache of every namespace, and from a cache per namespace:
// NewByNamespace's Namespace(ns) costs what a single cache's does.
//
//	go test ./lister -run xxx -bench NamespaceList -benchmem
func BenchmarkNamespaceList(b *testing.B) {
	const n, namespaces = 10000, 10
	one, _, pods := benchCache(b, n, namespaces)
	split := map[string]*indexer.Indexer{}
	for _, p := range pods {
		x := split[p.Namespace]
		if x == nil {
			x = indexer.New(nil)
			split[p.Namespace] = x
		}
		if err := x.Add(p.Namespace+"/"+p.Name, p); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		l    *Lister[*corev1.Pod]
	}{
		{"one cache", New[*corev1.Pod](one, Options{})},
		{"cache per namespace", NewByNamespace[*corev1.Pod](split, Options{})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := bc.l.Namespace("ns-3").List(labels.Everything())
				if err != nil || len(got) != n/namespaces {
					b.Fatalf("%d pods, %v", len(got), err)
				}
			}
		})
	}
}
