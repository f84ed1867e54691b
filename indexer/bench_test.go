package indexer

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The package's own benchmarks. bench/ runs the same scenarios side by side
// with client-go; these are for profiling the indexer alone:
//
//	go test ./indexer -run xxx -bench . -benchmem

// benchPods returns n pods over namespaces, each in two versions that differ
// only in resourceVersion, and their keys.
func benchPods(n, namespaces int) (keys []string, v1, v2 []*corev1.Pod) {
	for i := range n {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       "ns-" + strconv.Itoa(i%namespaces),
				Name:            fmt.Sprintf("pod-%07d", i),
				ResourceVersion: strconv.Itoa(2 * i),
				Labels:          map[string]string{"app": "app-" + strconv.Itoa(i/100), "tier": "web"},
			},
			Spec: corev1.PodSpec{NodeName: "node-" + strconv.Itoa(i%50)},
		}
		q := p.DeepCopy()
		q.ResourceVersion = strconv.Itoa(2*i + 1)
		keys, v1, v2 = append(keys, p.Namespace+"/"+p.Name), append(v1, p), append(v2, q)
	}
	return keys, v1, v2
}

func benchIndexer(b *testing.B, keys []string, pods []*corev1.Pod, indexers Indexers) *Indexer {
	x := New(indexers)
	items := make(map[string]runtime.Object, len(keys))
	for i, k := range keys {
		items[k] = pods[i]
	}
	if err := x.Replace(items, "1"); err != nil {
		b.Fatal(err)
	}
	return x
}

func podField(f func(p *corev1.Pod) string) IndexFunc {
	return func(obj runtime.Object) ([]string, error) { return []string{f(obj.(*corev1.Pod))}, nil }
}

// BenchmarkUpdate: one Update that changes no index value, with the two
// built-in indexes ("indexes=1", client-go's NamespaceIndex equivalent),
// with four custom ones more ("indexes=5"), and with the label index in use
// ("indexes=1+labels").
func BenchmarkUpdate(b *testing.B) {
	keys, v1, v2 := benchPods(10_000, 10)
	custom := Indexers{
		"node":  podField(func(p *corev1.Pod) string { return p.Spec.NodeName }),
		"app":   podField(func(p *corev1.Pod) string { return p.Labels["app"] }),
		"name":  podField(func(p *corev1.Pod) string { return p.Name }),
		"phase": podField(func(p *corev1.Pod) string { return string(p.Status.Phase) }),
	}
	for _, n := range []string{"1", "5", "1+labels"} {
		b.Run("indexes="+n, func(b *testing.B) {
			var idx Indexers
			if n == "5" {
				idx = custom
			}
			x := benchIndexer(b, keys, v1, idx)
			if n == "1+labels" {
				if err := x.UseLabelIndex(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				j := i % len(keys)
				p := v2[j]
				if (i/len(keys))%2 == 1 {
					p = v1[j]
				}
				if err := x.Update(keys[j], p); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkUpdateAfterRead: the same update when a reader has frozen the
// cache (Freeze) since the last write, so the write must copy its path.
func BenchmarkUpdateAfterRead(b *testing.B) {
	keys, v1, v2 := benchPods(10_000, 10)
	x := benchIndexer(b, keys, v1, nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = x.Freeze()
		j := i % len(keys)
		p := v2[j]
		if (i/len(keys))%2 == 1 {
			p = v1[j]
		}
		if err := x.Update(keys[j], p); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkByIndex: the 1,000 objects of one namespace out of 10,000.
func BenchmarkByIndex(b *testing.B) {
	keys, v1, _ := benchPods(10_000, 10)
	x := benchIndexer(b, keys, v1, nil)
	b.ReportAllocs()
	for b.Loop() {
		objs, err := x.ByIndex(NamespaceIndex, "ns-3")
		if err != nil || len(objs) != 1000 {
			b.Fatal(len(objs), err)
		}
	}
}

// BenchmarkUseLabelIndex: the one-time cost of putting the label index in
// use over 100,000 stored objects (what the first equality-selector List
// pays).
func BenchmarkUseLabelIndex(b *testing.B) {
	keys, v1, _ := benchPods(100_000, 10)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		x := benchIndexer(b, keys, v1, nil)
		b.StartTimer()
		if err := x.UseLabelIndex(); err != nil {
			b.Fatal(err)
		}
	}
}
