package lister

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/indexer"
)

func pod(namespace, name, ls string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if ls != "" {
		p.Labels = labels.Set{}
		for _, kv := range strings.Split(ls, ",") {
			k, v, _ := strings.Cut(kv, "=")
			p.Labels[k] = v
		}
	}
	return p
}

func keyOf(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func store(t *testing.T, objs ...runtime.Object) *indexer.Indexer {
	t.Helper()
	x := indexer.New(nil)
	for _, o := range objs {
		require.NoError(t, x.Add(keyOf(o.(metav1.Object)), o))
	}
	return x
}

func podNames(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, keyOf(p))
	}
	slices.Sort(out)
	return out
}

var podsResource = schema.GroupResource{Resource: "pods"}

func TestGet(t *testing.T) {
	web := pod("shop", "web-1", "app=web")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	x := store(t, web, node)
	pods := New[*corev1.Pod](x, Options{Resource: podsResource})

	got, err := pods.Get("shop", "web-1")
	require.NoError(t, err)
	require.Same(t, web, got, "shared by default: the cache's own object")
	got, err = pods.Namespace("shop").Get("web-1")
	require.NoError(t, err)
	require.Same(t, web, got)

	_, err = pods.Namespace("shop").Get("web-9")
	require.True(t, apierrors.IsNotFound(err))
	require.Equal(t, `pods "web-9" not found`, err.Error())
	_, err = pods.Get("other", "web-1")
	require.True(t, apierrors.IsNotFound(err), "the namespace is part of the name")

	nodes := New[*corev1.Node](x, Options{})
	n, err := nodes.Get("", "n1")
	require.NoError(t, err, "cluster-scoped objects live under their name alone")
	require.Same(t, node, n)

	_, err = pods.Get("", "n1")
	var te *TypeError
	require.ErrorAs(t, err, &te, "a Node is not a Pod: an error, not a panic")
	require.Equal(t, &TypeError{Key: "n1", Want: "*v1.Pod", Got: "*v1.Node"}, te)
	require.Equal(t, `lister: object "n1" is a *v1.Node, not a *v1.Pod`, te.Error())
}

func TestCopyOnRead(t *testing.T) {
	web := pod("shop", "web-1", "app=web")
	x := store(t, web)
	pods := New[*corev1.Pod](x, Options{CopyOnRead: true})

	got, err := pods.Get("shop", "web-1")
	require.NoError(t, err)
	require.NotSame(t, web, got)
	require.Equal(t, web, got)
	got.Labels["app"] = "changed" // allowed: it is our copy
	require.Equal(t, "web", web.Labels["app"])

	list, err := pods.List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.NotSame(t, web, list[0])
	require.Equal(t, web, list[0])
}

func TestNilIndexer(t *testing.T) {
	pods := New[*corev1.Pod](nil, Options{})
	_, err := pods.Get("a", "b")
	require.ErrorIs(t, err, ErrNoIndexer)
	_, err = pods.Namespace("a").List(nil)
	require.ErrorIs(t, err, ErrNoIndexer)
}

func TestList(t *testing.T) {
	x := store(t,
		pod("shop", "web-1", "app=web,tier=fe"),
		pod("shop", "web-2", "app=web,tier=fe,canary=true"),
		pod("shop", "db-1", "app=db,tier=be"),
		pod("lab", "web-1", "app=web,tier=fe"),
		pod("lab", "job-1", ""),
	)
	pods := New[*corev1.Pod](x, Options{})
	tests := []struct {
		namespace string
		selector  string
		want      []string
	}{
		{"", "", []string{"lab/job-1", "lab/web-1", "shop/db-1", "shop/web-1", "shop/web-2"}},
		{"shop", "", []string{"shop/db-1", "shop/web-1", "shop/web-2"}},
		{"", "app=web", []string{"lab/web-1", "shop/web-1", "shop/web-2"}},
		{"shop", "app=web", []string{"shop/web-1", "shop/web-2"}},
		{"shop", "app==web,!canary", []string{"shop/web-1"}},
		{"", "app in (web),tier=fe,canary=true", []string{"shop/web-2"}},
		{"", "app in (web,db)", []string{"lab/web-1", "shop/db-1", "shop/web-1", "shop/web-2"}},
		{"", "tier!=fe", []string{"lab/job-1", "shop/db-1"}},
		{"lab", "app notin (web)", []string{"lab/job-1"}},
		{"", "app=nope", []string{}},
		{"nope", "", []string{}},
		{"shop", "app=web,tier=be", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.namespace+"|"+tc.selector, func(t *testing.T) {
			sel, err := labels.Parse(tc.selector)
			require.NoError(t, err)
			got, err := pods.Namespace(tc.namespace).List(sel)
			require.NoError(t, err)
			require.Equal(t, tc.want, podNames(got))
		})
	}

	all, err := pods.List(nil)
	require.NoError(t, err, "a nil selector selects everything")
	require.Len(t, all, 5)
	none, err := pods.List(labels.Nothing())
	require.NoError(t, err)
	require.Empty(t, none)
}

// TestListAfterInPlaceChange: a caller that changes a cached pod's labels in
// place (which the docs forbid: every other reader sees it) and then lets
// the real update through finds the label query right again, as client-go's
// scanning lister would: the index unfiles the pod from the labels it filed
// it under, not from what the changed object says.
func TestListAfterInPlaceChange(t *testing.T) {
	web := pod("shop", "web-1", "app=web")
	x := store(t, web, pod("shop", "web-2", "app=web"))
	pods := New[*corev1.Pod](x, Options{})
	list, err := pods.Namespace("shop").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	require.NoError(t, err)
	require.Equal(t, []string{"shop/web-1", "shop/web-2"}, podNames(list), "the label index is in use")

	web.Labels["app"] = "db"
	require.NoError(t, x.Update("shop/web-1", pod("shop", "web-1", "app=db")))

	for sel, want := range map[string][]string{
		"app=db":  {"shop/web-1"},
		"app=web": {"shop/web-2"},
		"":        {"shop/web-1", "shop/web-2"},
	} {
		s, err := labels.Parse(sel)
		require.NoError(t, err)
		list, err := pods.List(s)
		require.NoError(t, err)
		require.Equal(t, want, podNames(list), "selector %q", sel)
	}
}

func TestListRefusesForeignTypes(t *testing.T) {
	x := store(t, pod("shop", "web-1", "app=web"), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: labels.Set{"app": "web"}}})
	pods := New[*corev1.Pod](x, Options{})
	_, err := pods.Namespace("shop").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	var te *TypeError
	require.ErrorAs(t, err, &te)
	require.Equal(t, "shop/web", te.Key)

	objs := New[runtime.Object](x, Options{})
	all, err := objs.List(nil)
	require.NoError(t, err, "a Lister of an interface type accepts every object that has it")
	require.Len(t, all, 2)
}

// TestPlanQuery checks which source the planner reads: the smallest bucket
// among the namespace and the selector's equality requirements, or a scan.
func TestPlanQuery(t *testing.T) {
	var objs []runtime.Object
	for i := range 20 {
		objs = append(objs, pod("big", fmt.Sprintf("p%d", i), "app=web,tier=fe"))
	}
	objs = append(objs, pod("small", "p0", "app=web,tier=fe"), pod("big", "rare", "app=web,tier=be,rare=yes"))
	x := store(t, objs...)
	require.NoError(t, x.UseLabelIndex())
	snap := x.Freeze()
	tests := []struct {
		namespace, selector string
		index, value        string
		size                int
	}{
		{"", "", "", "", 22},
		{"", "tier!=fe", "", "", 22},
		{"", "app in (web,db)", "", "", 22},
		{"", "app=web", indexer.LabelIndex, "app=web", 22},
		{"", "app=web,tier=be", indexer.LabelIndex, "tier=be", 1},
		{"", "app=web,rare==yes", indexer.LabelIndex, "rare=yes", 1},
		{"", "tier in (be)", indexer.LabelIndex, "tier=be", 1},
		{"small", "app=web", indexer.NamespaceIndex, "small", 1},
		{"big", "tier=be", indexer.LabelIndex, "tier=be", 1},
		{"big", "", indexer.NamespaceIndex, "big", 21},
		{"", "missing=label", indexer.LabelIndex, "missing=label", 0},
	}
	for _, tc := range tests {
		t.Run(tc.namespace+"|"+tc.selector, func(t *testing.T) {
			sel, err := labels.Parse(tc.selector)
			require.NoError(t, err)
			q, err := planQuery(snap, tc.namespace, sel, equalityValues(sel))
			require.NoError(t, err)
			require.Equal(t, []any{tc.index, tc.value, tc.size}, []any{q.index, q.value, q.size})
		})
	}
}

// TestListMatchesBruteForce compares List with a plain filter of every
// object, for random pods, namespaces and selectors.
func TestListMatchesBruteForce(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(uint64(seed), 4))
	selectors := []string{"", "app=a", "app==b,tier=x", "app in (a)", "app in (a,b)", "tier notin (x)",
		"zone", "!zone", "app=a,tier!=y", "app=a,zone=1,tier=x", "app=c"}
	namespaces := []string{"", "n0", "n1", "n2"}
	for range 20 {
		var pods []*corev1.Pod
		x := indexer.New(nil)
		for i := range 60 {
			var ls []string
			for _, k := range []string{"app", "tier", "zone"} {
				if rng.IntN(3) > 0 {
					ls = append(ls, k+"="+[]string{"a", "b", "c", "x", "y", "1"}[rng.IntN(6)])
				}
			}
			p := pod(fmt.Sprintf("n%d", rng.IntN(3)), fmt.Sprint(i), strings.Join(ls, ","))
			pods = append(pods, p)
			require.NoError(t, x.Add(keyOf(p), p))
		}
		l := New[*corev1.Pod](x, Options{})
		for _, s := range selectors {
			sel, err := labels.Parse(s)
			require.NoError(t, err)
			for _, ns := range namespaces {
				want := []string{}
				for _, p := range pods {
					if (ns == "" || p.Namespace == ns) && sel.Matches(labels.Set(p.Labels)) {
						want = append(want, keyOf(p))
					}
				}
				slices.Sort(want)
				got, err := l.Namespace(ns).List(sel)
				require.NoError(t, err)
				require.Equal(t, want, podNames(got), "seed %d namespace %q selector %q", seed, ns, s)
			}
		}
	}
}

// TestListDuringWrites: typed lists running alongside a writer always see
// one whole version of the cache, never a partly updated one. The writer
// moves 200 pods, p0 to p199, from one generation (the label gen=N) to the
// next, in turns of two kinds: one Replace of all of them, which publishes a
// new version, and an Update of each pod in order, which edits the open
// version in place whenever no read is in progress. Either way every version
// holds p0 to p(k-1) at some generation g+1 and the rest at g (k may be 0 or
// 200). A list that mixed two versions would sooner or later see a pod at
// the older generation after a lower-numbered one at the newer, and the race
// detector would see a read of a trie node while the writer changes it.
func TestListDuringWrites(t *testing.T) {
	defer goleak.VerifyNone(t)
	x := indexer.New(nil)
	const n = 200
	at := func(i, g int) *corev1.Pod {
		return pod("shop", fmt.Sprintf("p%d", i), fmt.Sprintf("app=web,gen=%d", g))
	}
	replace := func(g int) {
		items := make(map[string]runtime.Object, n)
		for i := range n {
			p := at(i, g)
			items[keyOf(p)] = p
		}
		require.NoError(t, x.Replace(items, strconv.Itoa(g)))
	}
	updateInTurn := func(g int) {
		for i := range n {
			p := at(i, g)
			require.NoError(t, x.Update(keyOf(p), p))
		}
	}
	replace(0)
	pods := New[*corev1.Pod](x, Options{})
	var (
		stop  atomic.Bool
		reads atomic.Int64
		wg    sync.WaitGroup
		errc  = make(chan error, 4)
	)
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				if err := listOnce(pods, n); err != nil {
					errc <- err
					return
				}
				reads.Add(1)
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for g := 1; g <= 300 || (reads.Load() < 200 && time.Now().Before(deadline)); g++ {
		if g%2 == 0 {
			replace(g)
		} else {
			updateInTurn(g)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	require.GreaterOrEqual(t, reads.Load(), int64(200), "the readers barely ran")
}

// listOnce lists the namespace and checks that it is one version of
// TestListDuringWrites' cache: all n pods, p0 to p(k-1) at one generation
// and the rest at the one before. It then lists the newest generation it
// saw through the label index, which reads a later version, where that
// generation may have become the older of two, or gone: see checkRun.
func listOnce(pods *Lister[*corev1.Pod], n int) error {
	all, err := pods.Namespace("shop").List(labels.Everything())
	if err != nil {
		return err
	}
	if len(all) != n {
		return fmt.Errorf("saw %d pods", len(all))
	}
	gens, err := generations(all, n)
	if err != nil {
		return err
	}
	newest := gens[0]
	for i, g := range gens {
		if g != newest && g != newest-1 || i > 0 && g > gens[i-1] {
			return fmt.Errorf("one list saw generations %v", gens)
		}
	}
	same, err := pods.List(labels.SelectorFromSet(labels.Set{"gen": strconv.Itoa(newest)}))
	if err != nil {
		return err
	}
	return checkRun(same, n, newest)
}

// generations returns the generation of p0 to p(n-1), by number, from a
// list that must hold each of them once.
func generations(list []*corev1.Pod, n int) ([]int, error) {
	gens := make([]int, n)
	seen := make([]bool, n)
	for _, p := range list {
		i, err1 := podNumber(p)
		g, err2 := strconv.Atoi(p.Labels["gen"])
		if err1 != nil || err2 != nil || i < 0 || i >= n || seen[i] {
			return nil, fmt.Errorf("unexpected pod %s with labels %v", p.Name, p.Labels)
		}
		gens[i], seen[i] = g, true
	}
	return gens, nil
}

// checkRun checks what a label query for generation g returned: the pods of
// one version at g, which are numbered from 0 up to some k without a gap
// (the newer generation of that version), from some k up to n-1 (the
// older), all of them, or none.
func checkRun(list []*corev1.Pod, n, g int) error {
	if len(list) == 0 {
		return nil
	}
	nums := make([]int, 0, len(list))
	for _, p := range list {
		i, err := podNumber(p)
		if err != nil || p.Labels["gen"] != strconv.Itoa(g) {
			return fmt.Errorf("gen=%d query returned %s with labels %v", g, p.Name, p.Labels)
		}
		nums = append(nums, i)
	}
	slices.Sort(nums)
	first, last := nums[0], nums[len(nums)-1]
	if last-first+1 != len(nums) || first != 0 && last != n-1 {
		return fmt.Errorf("generation %d: the label index gave pods %v", g, nums)
	}
	return nil
}

// podNumber returns i for the pod named "p<i>".
func podNumber(p *corev1.Pod) (int, error) {
	return strconv.Atoi(strings.TrimPrefix(p.Name, "p"))
}

func TestByIndex(t *testing.T) {
	x := indexer.New(indexer.Indexers{"node": func(obj runtime.Object) ([]string, error) {
		return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
	}})
	for i, node := range []string{"n1", "n2", "n1"} {
		p := pod("shop", fmt.Sprint("web-", i), "")
		p.Spec.NodeName = node
		require.NoError(t, x.Add("shop/"+p.Name, p))
	}
	l := New[*corev1.Pod](x, Options{})
	got, err := l.ByIndex("node", "n1")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"shop/web-0", "shop/web-2"}, podNames(got))
	_, err = l.ByIndex("nope", "n1")
	require.Error(t, err)
	_, err = New[*corev1.Service](x, Options{}).ByIndex("node", "n1")
	var typeErr *TypeError
	require.ErrorAs(t, err, &typeErr)
}
