package indexer

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// step is one write of a table test, and the error it must return (nil for
// success; otherwise checked with errors.Is).
type step struct {
	do      func(x *Indexer) error
	wantErr error
}

func add(p *corev1.Pod) step {
	return step{do: func(x *Indexer) error { return x.Add(keyOf(p), p) }}
}

func update(p *corev1.Pod) step {
	return step{do: func(x *Indexer) error { return x.Update(keyOf(p), p) }}
}

func del(key string) step {
	return step{do: func(x *Indexer) error { return x.Delete(key) }}
}

func replace(rv string, pods ...*corev1.Pod) step {
	return step{do: func(x *Indexer) error {
		items := map[string]runtime.Object{}
		for _, p := range pods {
			items[keyOf(p)] = p
		}
		return x.Replace(items, rv)
	}}
}

func failsWith(s step, err error) step {
	s.wantErr = err
	return s
}

func TestIndexMaintenance(t *testing.T) {
	custom := Indexers{"node": byNode, "container": byContainer}
	all := []string{NamespaceIndex, LabelIndex, "node", "container"}
	tests := []struct {
		name     string
		steps    []step
		wantKeys []string
		want     contents
	}{{
		name:     "add files the key under namespace, every label and custom values",
		steps:    []step{add(pod("a", "p1", "app=web,tier=fe", "n1")), add(pod("a", "p2", "app=web", ""))},
		wantKeys: []string{"a/p1", "a/p2"},
		want: contents{
			NamespaceIndex: {"a": {"a/p1", "a/p2"}},
			LabelIndex:     {"app=web": {"a/p1", "a/p2"}, "tier=fe": {"a/p1"}},
			"node":         {"n1": {"a/p1"}},
			"container":    {},
		},
	}, {
		name: "update moves the key between values and drops values left empty",
		steps: []step{
			add(pod("a", "p1", "app=web,tier=fe,old=x", "n1")),
			update(pod("a", "p1", "app=api,tier=fe,new=y", "n2")),
		},
		wantKeys: []string{"a/p1"},
		want: contents{
			NamespaceIndex: {"a": {"a/p1"}},
			LabelIndex:     {"app=api": {"a/p1"}, "tier=fe": {"a/p1"}, "new=y": {"a/p1"}},
			"node":         {"n2": {"a/p1"}},
			"container":    {},
		},
	}, {
		name: "update under the same key may even change namespace",
		steps: []step{
			step{do: func(x *Indexer) error { return x.Add("k", pod("a", "p", "", "")) }},
			step{do: func(x *Indexer) error { return x.Update("k", pod("b", "p", "", "")) }},
		},
		wantKeys: []string{"k"},
		want:     contents{NamespaceIndex: {"b": {"k"}}, LabelIndex: {}, "node": {}, "container": {}},
	}, {
		name: "multi-valued index: duplicates count once, overlap stays",
		steps: []step{
			add(withContainers(pod("a", "p1", "", ""), "main", "main", "side")),
			update(withContainers(pod("a", "p1", "", ""), "side", "init")),
		},
		wantKeys: []string{"a/p1"},
		want: contents{
			NamespaceIndex: {"a": {"a/p1"}},
			LabelIndex:     {},
			"node":         {},
			"container":    {"side": {"a/p1"}, "init": {"a/p1"}},
		},
	}, {
		name: "delete removes the key from every index and empty values vanish",
		steps: []step{
			add(withContainers(pod("a", "p1", "app=web", "n1"), "c")),
			add(pod("b", "p2", "app=web", "n1")),
			del("a/p1"),
		},
		wantKeys: []string{"b/p2"},
		want: contents{
			NamespaceIndex: {"b": {"b/p2"}},
			LabelIndex:     {"app=web": {"b/p2"}},
			"node":         {"n1": {"b/p2"}},
			"container":    {},
		},
	}, {
		name:     "deleting an absent key does nothing",
		steps:    []step{add(pod("a", "p1", "", "")), del("a/nope"), del("a/p1"), del("a/p1")},
		wantKeys: []string{},
		want:     contents{NamespaceIndex: {}, LabelIndex: {}, "node": {}, "container": {}},
	}, {
		name:     "a cluster-scoped object is filed under namespace \"\"",
		steps:    []step{add(pod("", "node-1", "zone=z1", ""))},
		wantKeys: []string{"node-1"},
		want: contents{
			NamespaceIndex: {"": {"node-1"}},
			LabelIndex:     {"zone=z1": {"node-1"}},
			"node":         {},
			"container":    {},
		},
	}, {
		name: "a failing index function refuses an add and stores nothing",
		steps: []step{
			add(pod("a", "p1", "app=web", "n1")),
			failsWith(add(pod("a", "p2", "app=web", "!")), errBadNode),
		},
		wantKeys: []string{"a/p1"},
		want: contents{
			NamespaceIndex: {"a": {"a/p1"}},
			LabelIndex:     {"app=web": {"a/p1"}},
			"node":         {"n1": {"a/p1"}},
			"container":    {},
		},
	}, {
		name: "a failing or panicking index function refuses an update and keeps the old object",
		steps: []step{
			add(pod("a", "p1", "app=web", "n1")),
			failsWith(update(pod("b", "p1", "app=api", "!")), errBadNode),
			failsWith(update(pod("b", "p1", "app=api", "panic")), ErrIndexFuncPanicked),
		},
		wantKeys: []string{"a/p1"},
		want: contents{
			NamespaceIndex: {"a": {"a/p1"}},
			LabelIndex:     {"app=web": {"a/p1"}},
			"node":         {"n1": {"a/p1"}},
			"container":    {},
		},
	}, {
		name: "replace swaps content and every index at once",
		steps: []step{
			add(pod("a", "p1", "app=web", "n1")),
			add(pod("a", "p2", "app=web", "n1")),
			replace("7", pod("a", "p2", "app=api", "n2"), pod("c", "p3", "", "")),
		},
		wantKeys: []string{"a/p2", "c/p3"},
		want: contents{
			NamespaceIndex: {"a": {"a/p2"}, "c": {"c/p3"}},
			LabelIndex:     {"app=api": {"a/p2"}},
			"node":         {"n2": {"a/p2"}},
			"container":    {},
		},
	}, {
		name: "a replace with one bad item changes nothing",
		steps: []step{
			add(pod("a", "p1", "app=web", "n1")),
			failsWith(replace("7", pod("a", "p2", "", ""), pod("a", "p3", "", "!")), errBadNode),
		},
		wantKeys: []string{"a/p1"},
		want: contents{
			NamespaceIndex: {"a": {"a/p1"}},
			LabelIndex:     {"app=web": {"a/p1"}},
			"node":         {"n1": {"a/p1"}},
			"container":    {},
		},
	}}
	for _, tc := range tests {
		// The label index is either in use from the start, and maintained by
		// every write, or put in use only when read at the end, and built
		// then from the objects. Both must end up with the same contents.
		for _, early := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/labels in use from the start=%v", tc.name, early), func(t *testing.T) {
				x := New(custom)
				if early {
					require.NoError(t, x.UseLabelIndex())
				}
				runSteps(t, x, tc.steps)
				require.Equal(t, !early, !x.latest.Load().labels, "writes left the label index as it was")
				require.Equal(t, tc.wantKeys, sortedKeys(x))
				require.Equal(t, len(tc.wantKeys), x.Len())
				require.Equal(t, tc.want, indexContents(t, x, all...))
			})
		}
	}
}

func runSteps(t *testing.T, x *Indexer, steps []step) {
	t.Helper()
	for i, s := range steps {
		err := s.do(x)
		if s.wantErr == nil {
			require.NoError(t, err, "step %d", i)
		} else {
			require.ErrorIs(t, err, s.wantErr, "step %d", i)
			var ife *IndexFuncError
			require.ErrorAs(t, err, &ife, "step %d", i)
			require.Equal(t, "node", ife.Index)
		}
	}
}

func TestAddIndexers(t *testing.T) {
	x := New(nil)
	require.NoError(t, x.Add("a/p1", pod("a", "p1", "", "n1")))
	require.NoError(t, x.Add("a/p2", pod("a", "p2", "", "n2")))
	_, err := x.ByIndex("node", "n1")
	require.ErrorIs(t, err, ErrNoSuchIndex)

	require.NoError(t, x.AddIndexers(Indexers{"node": byNode}), "indexes added after use")
	require.Equal(t, contents{"node": {"n1": {"a/p1"}, "n2": {"a/p2"}}}, indexContents(t, x, "node"))

	require.NoError(t, x.Add("a/p3", pod("a", "p3", "", "n1")), "the new index is maintained by later writes")
	require.Equal(t, contents{"node": {"n1": {"a/p1", "a/p3"}, "n2": {"a/p2"}}}, indexContents(t, x, "node"))

	for name, idx := range map[string]Indexers{
		"taken name":             {"node": byContainer},
		"built-in name":          {NamespaceIndex: byContainer},
		"nil function":           {"other": nil},
		"fails on stored object": {"strict": func(runtime.Object) ([]string, error) { return nil, errBadNode }},
	} {
		t.Run(name, func(t *testing.T) {
			err := x.AddIndexers(idx)
			require.Error(t, err)
			switch name {
			case "nil function":
				require.ErrorIs(t, err, ErrNilIndexFunc)
			case "fails on stored object":
				require.ErrorIs(t, err, errBadNode)
			default:
				require.ErrorIs(t, err, ErrIndexExists)
			}
			require.Equal(t, contents{"node": {"n1": {"a/p1", "a/p3"}, "n2": {"a/p2"}}}, indexContents(t, x, "node"))
			require.Nil(t, x.ListIndexFuncValues("strict"), "a refused index does not exist")
			require.NoError(t, x.Add("a/p4", pod("a", "p4", "", "")), "writes still work")
			require.NoError(t, x.Delete("a/p4"))
		})
	}
}

func TestRefusedWritesChangeNothing(t *testing.T) {
	x := New(nil)
	require.NoError(t, x.Add("a/p", pod("a", "p", "app=web", "")))
	require.ErrorIs(t, x.Add("", pod("a", "q", "", "")), ErrEmptyKey)
	require.ErrorIs(t, x.Add("a/q", nil), ErrNilObject)
	require.ErrorIs(t, x.Update("a/p", (*corev1.Pod)(nil)), ErrNilObject)
	require.ErrorIs(t, x.Replace(map[string]runtime.Object{"a/q": nil}, "9"), ErrNilObject)

	// An object without Kubernetes metadata cannot be filed by the built-in
	// indexes: a typed error, not a panic.
	err := x.Add("status", &metav1.Status{})
	var ife *IndexFuncError
	require.ErrorAs(t, err, &ife)
	require.Equal(t, NamespaceIndex, ife.Index)
	require.Equal(t, "status", ife.Key)

	require.Equal(t, []string{"a/p"}, sortedKeys(x))
	require.Equal(t, contents{LabelIndex: {"app=web": {"a/p"}}}, indexContents(t, x, LabelIndex))
}

func TestNewWithUnusableIndexers(t *testing.T) {
	x := New(Indexers{LabelIndex: byNode})
	err := x.Add("a/p", pod("a", "p", "", ""))
	require.ErrorIs(t, err, ErrIndexExists)
	require.ErrorIs(t, x.Replace(nil, "1"), ErrIndexExists)
	require.ErrorIs(t, x.Delete("a/p"), ErrIndexExists)
	require.ErrorIs(t, x.AddIndexers(Indexers{"n": byNode}), ErrIndexExists)
	require.Zero(t, x.Len())

	x = New(Indexers{"n": nil})
	require.ErrorIs(t, x.Add("a/p", pod("a", "p", "", "")), ErrNilIndexFunc)
}

// TestCheckIndexers: CheckIndexers refuses what New cannot set up, and
// only that, so a caller can refuse a definition before building anything.
func TestCheckIndexers(t *testing.T) {
	require.NoError(t, CheckIndexers(nil))
	require.NoError(t, CheckIndexers(Indexers{"node": byNode}))
	require.ErrorIs(t, CheckIndexers(Indexers{NamespaceIndex: NamespaceIndexFunc}), ErrIndexExists)
	require.ErrorIs(t, CheckIndexers(Indexers{"node": byNode, LabelIndex: byNode}), ErrIndexExists)
	require.ErrorIs(t, CheckIndexers(Indexers{"node": nil}), ErrNilIndexFunc)
}

func TestUnknownIndex(t *testing.T) {
	x := New(nil)
	_, err := x.ByIndex("nope", "v")
	require.ErrorIs(t, err, ErrNoSuchIndex)
	_, err = x.IndexKeys("nope", "v")
	require.ErrorIs(t, err, ErrNoSuchIndex)
	require.Nil(t, x.ListIndexFuncValues("nope"))
	_, err = x.Freeze().IndexLen("nope", "v")
	require.ErrorIs(t, err, ErrNoSuchIndex)

	objs, err := x.ByIndex(NamespaceIndex, "empty")
	require.NoError(t, err, "a known index with no such value is just empty")
	require.Empty(t, objs)
}

func TestResourceVersion(t *testing.T) {
	x := New(nil)
	require.Equal(t, "", x.ResourceVersion())
	p := pod("a", "p", "", "")
	p.ResourceVersion = "10"
	require.NoError(t, x.Add("a/p", p))
	require.Equal(t, "10", x.ResourceVersion(), "an add records its object's resourceVersion")

	require.NoError(t, x.Add("a/q", pod("a", "q", "", "")))
	require.Equal(t, "10", x.ResourceVersion(), "an object without one leaves it")

	require.NoError(t, x.Delete("a/p"))
	require.Equal(t, "10", x.ResourceVersion(), "delete has no object to read it from")

	x.SetResourceVersion("12")
	require.Equal(t, "12", x.ResourceVersion())

	require.NoError(t, x.Replace(nil, "20"))
	require.Equal(t, "20", x.ResourceVersion())
	require.Zero(t, x.Len())

	require.Error(t, x.Replace(map[string]runtime.Object{"": pod("a", "p", "", "")}, "30"))
	require.Equal(t, "20", x.ResourceVersion(), "a refused replace keeps it")
}

// TestSnapshotIsImmutable: a snapshot taken before writes still shows the
// content, indexes and resourceVersion it had, after every kind of write.
func TestSnapshotIsImmutable(t *testing.T) {
	x := New(Indexers{"node": byNode})
	p1, p2 := pod("a", "p1", "app=web", "n1"), pod("a", "p2", "app=web", "n1")
	require.NoError(t, x.Add("a/p1", p1))
	require.NoError(t, x.Add("a/p2", p2))
	x.SetResourceVersion("5")
	snap := x.Freeze()

	require.NoError(t, x.Update("a/p1", pod("b", "p1", "app=api", "n2")))
	require.NoError(t, x.Delete("a/p2"))
	require.NoError(t, x.Add("a/p3", pod("a", "p3", "", "")))
	require.NoError(t, x.AddIndexers(Indexers{"container": byContainer}))
	require.NoError(t, x.Replace(nil, "9"))
	require.Zero(t, x.Len())

	require.Equal(t, 2, snap.Len())
	require.Equal(t, "5", snap.ResourceVersion())
	got, ok := snap.Get("a/p1")
	require.True(t, ok)
	require.Same(t, p1, got)
	n, err := snap.IndexLen(LabelIndex, "app=web")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	seq, err := snap.Indexed("node", "n1")
	require.NoError(t, err)
	keys := map[string]runtime.Object{}
	for k, o := range seq {
		keys[k] = o
	}
	require.Equal(t, map[string]runtime.Object{"a/p1": p1, "a/p2": p2}, keys)
	_, err = snap.IndexLen("container", "c")
	require.ErrorIs(t, err, ErrNoSuchIndex, "the snapshot keeps its own index definitions")
}

// TestValuesShrink: an index of short-lived values (one per object) must not
// keep a value per object it ever saw.
func TestValuesShrink(t *testing.T) {
	x := New(Indexers{"node": byNode})
	for i := range 100 {
		p := pod("a", "p", "gen="+string(rune('a'+i%26))+string(rune('a'+i/26)), "node-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		require.NoError(t, x.Update("a/p", p))
		require.Len(t, x.ListIndexFuncValues("node"), 1)
		require.Len(t, x.ListIndexFuncValues(LabelIndex), 1)
	}
	require.NoError(t, x.Delete("a/p"))
	require.Empty(t, x.ListIndexFuncValues("node"))
	require.Empty(t, x.ListIndexFuncValues(LabelIndex))
	require.Empty(t, x.ListIndexFuncValues(NamespaceIndex))
}

func TestIndexFuncErrorMessage(t *testing.T) {
	err := &IndexFuncError{Index: "node", Key: "a/p", Err: errBadNode}
	require.Equal(t, `indexer: index "node" failed for key "a/p": bad node`, err.Error())
	require.True(t, errors.Is(err, errBadNode))
}

// TestLabelIndexComesIntoUse: the label index costs nothing until something
// needs it; reads before that still get right answers, by scanning.
func TestLabelIndexComesIntoUse(t *testing.T) {
	x := New(nil)
	require.NoError(t, x.Add("a/p1", pod("a", "p1", "app=web", "")))
	require.NoError(t, x.Add("a/p2", pod("a", "p2", "app=db", "")))
	require.NoError(t, x.Update("a/p2", pod("a", "p2", "app=web,tier=fe", "")))
	require.False(t, x.latest.Load().labels)
	require.Zero(t, x.latest.Load().indexes[1].size, "no label buckets were built")

	before := x.Freeze()
	n, err := before.IndexLen(LabelIndex, "app=web")
	require.NoError(t, err)
	require.Equal(t, 2, n, "a snapshot answers by scanning")
	vals, err := before.IndexValues(LabelIndex)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"app=web", "tier=fe"}, vals)
	require.False(t, x.latest.Load().labels, "snapshot reads do not put it in use")

	keys, err := x.IndexKeys(LabelIndex, "tier=fe")
	require.NoError(t, err)
	require.Equal(t, []string{"a/p2"}, keys)
	require.True(t, x.latest.Load().labels, "an Indexer read of LabelIndex does")
	require.Equal(t, 2, x.latest.Load().indexes[1].size)
	require.NoError(t, x.UseLabelIndex(), "again: nothing to do")

	require.NoError(t, x.Delete("a/p1"))
	require.Equal(t, contents{LabelIndex: {"app=web": {"a/p2"}, "tier=fe": {"a/p2"}}}, indexContents(t, x, LabelIndex))
	n, _ = before.IndexLen(LabelIndex, "app=web")
	require.Equal(t, 2, n, "the old snapshot is unchanged")

	require.NoError(t, x.Replace(nil, "5"))
	require.True(t, x.latest.Load().labels, "replace keeps it in use")
}

func TestSwapReturnsWhatItReplaced(t *testing.T) {
	x := New(nil)
	v1, v2 := pod("a", "p", "app=web", ""), pod("a", "p", "app=db", "")

	old, existed, err := x.Swap("a/p", v1)
	require.NoError(t, err)
	require.False(t, existed)
	require.Nil(t, old)

	old, existed, err = x.Swap("a/p", v2)
	require.NoError(t, err)
	require.True(t, existed)
	require.Same(t, v1, old)
	got, _ := x.Get("a/p")
	require.Same(t, v2, got)
	require.Equal(t, contents{LabelIndex: {"app=db": {"a/p"}}}, indexContents(t, x, LabelIndex))

	// A refused write changes nothing and returns no old object.
	old, existed, err = x.Swap("a/p", (*corev1.Pod)(nil))
	require.ErrorIs(t, err, ErrNilObject)
	require.False(t, existed)
	require.Nil(t, old)
	got, _ = x.Get("a/p")
	require.Same(t, v2, got)
}

// A read that has returned leaves the writer editing in place: the state
// the next write edits is the one the read saw, not a thawed copy whose
// writes copy their paths. Only Freeze, whose view the caller may keep,
// freezes it.
func TestReturnedReadsDoNotFreeze(t *testing.T) {
	x := New(Indexers{"node": byNode})
	for i := range 100 {
		p := pod("ns1", fmt.Sprintf("p%d", i), "app=a", "n1")
		require.NoError(t, x.Add(keyOf(p), p))
	}
	require.NoError(t, x.UseLabelIndex())
	reads := map[string]func(){
		"List":                func() { _ = x.List() },
		"ListKeys":            func() { _ = x.ListKeys() },
		"Len":                 func() { _ = x.Len() },
		"ResourceVersion":     func() { _ = x.ResourceVersion() },
		"ByIndex":             func() { _, _ = x.ByIndex(NamespaceIndex, "ns1") },
		"ByIndex labels":      func() { _, _ = x.ByIndex(LabelIndex, "app=a") },
		"IndexKeys":           func() { _, _ = x.IndexKeys("node", "n1") },
		"ListIndexFuncValues": func() { _ = x.ListIndexFuncValues("node") },
		"Read":                func() { x.Read(func(s Snapshot) { _ = s.Len() }) },
		"Get":                 func() { _, _ = x.Get("ns1/p1") },
	}
	for name, read := range reads {
		before := x.latest.Load()
		read()
		p := pod("ns1", "p7", "app=a", "n1")
		require.NoError(t, x.Update(keyOf(p), p))
		require.Same(t, before, x.latest.Load(), "%s: the write after it thawed a new version", name)
	}
	before := x.latest.Load()
	_ = x.Freeze()
	p := pod("ns1", "p7", "app=a", "n1")
	require.NoError(t, x.Update(keyOf(p), p))
	require.NotSame(t, before, x.latest.Load(), "a frozen view may be kept: the write after it must not edit what it holds")
}
