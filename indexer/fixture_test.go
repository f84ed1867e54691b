package indexer

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// pod builds a test object. labels is "k=v,k=v" ("" for none); node is the
// value the "node" test index files it under ("" for none, "!" to make that
// index fail, "panic" to make it panic).
func pod(namespace, name, labels, node string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       corev1.PodSpec{NodeName: node},
	}
	if labels != "" {
		p.Labels = map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			p.Labels[k] = v
		}
	}
	return p
}

func keyOf(p *corev1.Pod) string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}

var errBadNode = errors.New("bad node")

// byNode files a pod under its node; it fails for node "!" and panics for
// node "panic", which is how tests provoke index function failures.
func byNode(obj runtime.Object) ([]string, error) {
	p := obj.(*corev1.Pod)
	switch p.Spec.NodeName {
	case "":
		return nil, nil
	case "!":
		return nil, errBadNode
	case "panic":
		panic("node says panic")
	}
	return []string{p.Spec.NodeName}, nil
}

// byContainer files a pod under each container name, possibly several times
// over: it exercises multi-valued indexes and duplicate values.
func byContainer(obj runtime.Object) ([]string, error) {
	var out []string
	for _, c := range obj.(*corev1.Pod).Spec.Containers {
		out = append(out, c.Name)
	}
	return out, nil
}

func withContainers(p *corev1.Pod, names ...string) *corev1.Pod {
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
	}
	return p
}

// contents is everything an Indexer's indexes say: index name -> value ->
// sorted keys. Empty values must not appear at all.
type contents map[string]map[string][]string

// indexContents reads the contents of the named indexes through the public
// API, checking on the way that ByIndex agrees with IndexKeys and Get.
func indexContents(t *testing.T, x *Indexer, names ...string) contents {
	t.Helper()
	out := contents{}
	for _, name := range names {
		vals := x.ListIndexFuncValues(name)
		out[name] = map[string][]string{}
		for _, v := range vals {
			keys, err := x.IndexKeys(name, v)
			require.NoError(t, err)
			require.NotEmpty(t, keys, "index %s keeps an empty value %q", name, v)
			slices.Sort(keys)
			out[name][v] = keys
			objs, err := x.ByIndex(name, v)
			require.NoError(t, err)
			require.Len(t, objs, len(keys))
			for _, k := range keys {
				obj, ok := x.Get(k)
				require.True(t, ok, "indexed key %s is not stored", k)
				require.Contains(t, objs, obj)
			}
		}
	}
	return out
}

func sortedKeys(x *Indexer) []string {
	keys := x.ListKeys()
	slices.Sort(keys)
	return keys
}
