package indexer

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// This file checks the Indexer against a model: a plain map of objects plus
// the list of index functions, from which every index is recomputed by brute
// force after each step. Random sequences of Add, Update, Delete, Replace,
// AddIndexers and SetResourceVersion, including writes that must be refused,
// must leave both in the same state; snapshots taken along the way must still
// show the state of their moment at the end.

// model is the brute-force twin of an Indexer.
type model struct {
	objects map[string]*corev1.Pod
	indexes map[string]IndexFunc // every index, the built-ins included
	rv      string
}

func newModel() *model {
	return &model{
		objects: map[string]*corev1.Pod{},
		indexes: map[string]IndexFunc{NamespaceIndex: NamespaceIndexFunc, LabelIndex: LabelIndexFunc, "node": byNode},
	}
}

func (m *model) clone() *model {
	return &model{objects: maps.Clone(m.objects), indexes: maps.Clone(m.indexes), rv: m.rv}
}

// accepts reports whether every index function files obj without failing.
func accepts(indexes map[string]IndexFunc, obj *corev1.Pod) bool {
	for name, fn := range indexes {
		if _, err := callIndexFunc(indexDef{name: name, fn: fn}, "k", obj); err != nil {
			return false
		}
	}
	return true
}

// expected computes every index from scratch.
func (m *model) expected() contents {
	out := contents{}
	for name, fn := range m.indexes {
		out[name] = map[string][]string{}
		for key, obj := range m.objects {
			vals, err := fn(obj)
			if err != nil {
				panic(err) // the model only holds accepted objects
			}
			for _, v := range distinct(vals) {
				out[name][v] = append(out[name][v], key)
			}
		}
		for _, keys := range out[name] {
			slices.Sort(keys)
		}
	}
	return out
}

// randomPod draws from small pools so that keys, values and labels collide
// often; one pod in twelve makes the node index fail or panic.
func randomPod(rng *rand.Rand) *corev1.Pod {
	var labels []string
	for _, k := range []string{"app", "tier", "zone"} {
		if rng.IntN(3) > 0 {
			labels = append(labels, fmt.Sprintf("%s=v%d", k, rng.IntN(3)))
		}
	}
	node := []string{"", "n1", "n2", "n3", "n4", "n5"}[rng.IntN(6)]
	if rng.IntN(12) == 0 {
		node = []string{"!", "panic"}[rng.IntN(2)]
	}
	p := pod(fmt.Sprintf("ns%d", rng.IntN(3)), fmt.Sprintf("p%d", rng.IntN(12)), strings.Join(labels, ","), node)
	p.ResourceVersion = fmt.Sprint(rng.IntN(1000))
	for range rng.IntN(4) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: []string{"a", "b", "c"}[rng.IntN(3)]})
	}
	return p
}

// strictIndex files pods by tier, and fails for tier=v2: an index that
// AddIndexers must refuse whenever such a pod is stored.
func strictIndex(obj runtime.Object) ([]string, error) {
	p := obj.(*corev1.Pod)
	if p.Labels["tier"] == "v2" {
		return nil, errBadNode
	}
	return []string{p.Labels["tier"]}, nil
}

// step applies one random operation to both x and m, checking that x
// refuses exactly what the model says it must.
func (m *model) step(t *testing.T, rng *rand.Rand, x *Indexer, n int) string {
	switch r := rng.IntN(20); {
	case r < 9: // Add or Update
		p := randomPod(rng)
		err := x.Update(keyOf(p), p)
		if !accepts(m.indexes, p) {
			require.Error(t, err)
			return "refused update " + keyOf(p)
		}
		require.NoError(t, err)
		m.objects[keyOf(p)] = p
		if p.ResourceVersion != "" {
			m.rv = p.ResourceVersion
		}
		return "update " + keyOf(p)
	case r < 14:
		p := randomPod(rng)
		require.NoError(t, x.Delete(keyOf(p)))
		delete(m.objects, keyOf(p))
		return "delete " + keyOf(p)
	case r < 16:
		items, next := map[string]runtime.Object{}, map[string]*corev1.Pod{}
		ok := true
		for range rng.IntN(15) {
			p := randomPod(rng)
			items[keyOf(p)], next[keyOf(p)] = p, p
		}
		for _, p := range next {
			ok = ok && accepts(m.indexes, p)
		}
		rv := fmt.Sprint(rng.IntN(1000))
		err := x.Replace(items, rv)
		if !ok {
			require.Error(t, err)
			return "refused replace"
		}
		require.NoError(t, err)
		m.objects, m.rv = next, rv
		return fmt.Sprintf("replace with %d", len(next))
	case r < 18:
		name := fmt.Sprintf("idx%d", rng.IntN(4))
		fn := []IndexFunc{byContainer, strictIndex}[rng.IntN(2)]
		err := x.AddIndexers(Indexers{name: fn})
		_, taken := m.indexes[name]
		ok := !taken
		for _, p := range m.objects {
			ok = ok && accepts(map[string]IndexFunc{name: fn}, p)
		}
		if !ok {
			require.Error(t, err)
			return "refused index " + name
		}
		require.NoError(t, err)
		m.indexes[name] = fn
		return "add index " + name
	default:
		rv := fmt.Sprint(n)
		x.SetResourceVersion(rv)
		m.rv = rv
		return "set rv " + rv
	}
}

// check compares x with m through the public read API, and last through a
// Freeze, which freezes the newest state: the write after a check copies
// the paths it changes. Reading LabelIndex through the Indexer puts the
// label index in use, so until the test decides to do that (labels false)
// the label index is checked through the snapshot only, which answers by
// scanning and changes nothing.
func (m *model) check(t *testing.T, x *Indexer, labels bool, what string) {
	t.Helper()
	require.ElementsMatch(t, slices.Collect(maps.Keys(m.objects)), x.ListKeys(), what)
	require.Equal(t, len(m.objects), x.Len(), what)
	require.Equal(t, m.rv, x.ResourceVersion(), what)
	for k, p := range m.objects {
		got, ok := x.Get(k)
		require.True(t, ok, what)
		require.Same(t, p, got, what)
	}
	if labels {
		require.Equal(t, m.expected(), indexContents(t, x, slices.Collect(maps.Keys(m.indexes))...), what)
	}
	m.checkSnapshot(t, x.Freeze(), what)
	if !labels {
		require.False(t, x.latest.Load().labels, "%s: the label index came into use unasked", what)
	}
}

// checkSnapshot compares a snapshot with the model of its moment.
func (m *model) checkSnapshot(t *testing.T, s Snapshot, what string) {
	t.Helper()
	require.Equal(t, len(m.objects), s.Len(), what)
	require.Equal(t, m.rv, s.ResourceVersion(), what)
	got := map[string]*corev1.Pod{}
	for k, o := range s.All() {
		got[k] = o.(*corev1.Pod)
	}
	require.Equal(t, m.objects, got, what)
	for name, values := range m.expected() {
		have, err := s.IndexValues(name)
		require.NoError(t, err, what)
		require.ElementsMatch(t, slices.Collect(maps.Keys(values)), have, "%s: values of %s", what, name)
		for v, keys := range values {
			seq, err := s.Indexed(name, v)
			require.NoError(t, err, what)
			var gotKeys []string
			for k := range seq {
				gotKeys = append(gotKeys, k)
			}
			slices.Sort(gotKeys)
			require.Equal(t, keys, gotKeys, "%s: %s=%s", what, name, v)
			n, err := s.IndexLen(name, v)
			require.NoError(t, err, what)
			require.Equal(t, len(keys), n, "%s: IndexLen %s=%s", what, name, v)
		}
	}
}

func TestIndexerMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(testSeed(t)), 2))
	// Checking after every write freezes every state: each write copies its
	// paths.
	runModel(t, rng, 20, 120, func(n int) modelRead {
		if rng.IntN(10) == 0 {
			return readCheckAndKeep
		}
		return readCheck
	})
}

// TestIndexerMatchesModelInPlace runs writes between reads. A check ends
// with a Freeze, which freezes the newest state, so with checks spaced out
// most writes edit an open state in place and recycle the nodes deletes
// unlink, which is the path a busy informer takes. Point reads (Get,
// intern), which do not freeze, are mixed in, and snapshots are kept along
// the way.
func TestIndexerMatchesModelInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(testSeed(t)), 4))
	runModel(t, rng, 40, 400, func(n int) modelRead {
		var r modelRead
		if rng.IntN(3) == 0 {
			r |= readPoint
		}
		switch rng.IntN(25) {
		case 0:
			r |= readCheck
		case 1:
			r |= readKeep
		}
		return r
	})
}

// modelRead says what runModel reads after a write.
type modelRead int

const (
	readCheck        modelRead = 1 << iota // compare the whole Indexer with the model
	readKeep                               // keep a snapshot, checked at the end
	readPoint                              // Get and intern one random key
	readCheckAndKeep = readCheck | readKeep
)

// runModel makes runs of random writes to an Indexer and the model, reading
// after each write what reads says, and checks every kept snapshot against
// the model as it was when the snapshot was taken. The label index comes
// into use at a random step: at once, later, or never.
func runModel(t *testing.T, rng *rand.Rand, runs, steps int, reads func(step int) modelRead) {
	t.Helper()
	for run := range runs {
		x, m := New(Indexers{"node": byNode}), newModel()
		type kept struct {
			snap  Snapshot
			model *model
			at    string
		}
		var snaps []kept
		useLabels := []int{0, rng.IntN(steps), steps}[rng.IntN(3)]
		for n := range steps {
			what := fmt.Sprintf("run %d step %d: %s", run, n, m.step(t, rng, x, n))
			if n == useLabels {
				require.NoError(t, x.UseLabelIndex())
			}
			r := reads(n)
			if r&readPoint != 0 {
				checkPointRead(t, x, m, randomPod(rng), what)
			}
			if r&readCheck != 0 {
				m.check(t, x, n >= useLabels, what)
			}
			if r&readKeep != 0 {
				snaps = append(snaps, kept{x.Freeze(), m.clone(), what})
			}
		}
		m.check(t, x, useLabels < steps, fmt.Sprintf("run %d: end", run))
		for _, k := range snaps {
			k.model.checkSnapshot(t, k.snap, "snapshot after "+k.at)
		}
	}
}

// checkPointRead compares Get and InternKey of p's key with the model. Neither
// freezes the state.
func checkPointRead(t *testing.T, x *Indexer, m *model, p *corev1.Pod, what string) {
	t.Helper()
	key := keyOf(p)
	got, ok := x.Get(key)
	want, has := m.objects[key]
	require.Equal(t, has, ok, what)
	if has {
		require.Same(t, want, got, what)
	}
	k, ok := x.InternKey([]byte(key))
	require.Equal(t, has, ok, what)
	if has {
		require.Equal(t, key, k, what)
	}
}
