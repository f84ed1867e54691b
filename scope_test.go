package informer_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func deployment(ns, name string, l map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "web:1"}}},
			},
		},
	}
}

// keysOf returns "namespace/name" (or "name") of objs, sorted.
func keysOf[T metav1.Object](objs []T) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		if o.GetNamespace() == "" {
			out = append(out, o.GetName())
			continue
		}
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// watchesOn describes the server's open watches, one line each, sorted,
// without their IDs; ids returns the IDs, by line.
func watchesOn(srv *fakeapi.Server) (lines []string, ids map[string]uint64) {
	ids = map[string]uint64{}
	for _, w := range srv.OpenWatches() {
		line := fmt.Sprintf("%s ns=%q labels=%q", w.Resource.Resource, w.Namespace, w.LabelSelector)
		lines = append(lines, line)
		ids[line] = w.ID
	}
	slices.Sort(lines)
	return lines, ids
}

// TestScopesPerTypeInOneFactory is the set-up of an operator in one
// factory: pods in namespaces a and b, nodes cluster-wide, deployments by
// label. It checks what reaches the server (one watch per namespace for
// pods, one each for the rest, with the right namespace and selector),
// what each lister returns (a and b merged, each namespace read alone,
// nothing of c or of unlabelled deployments), that one handler hears both
// namespaces, and that removing the pods informer closes both its watches
// and leaves the nodes and deployments informers on the watches they had
// (goleak, in newEnv, checks that nothing of the pods informer is left).
func TestScopesPerTypeInOneFactory(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{},
		pod("a", "p1", nil), pod("b", "p2", nil), pod("c", "p3", nil),
		node("n1"), node("n2"),
		deployment("x", "web", map[string]string{"tier": "web"}),
		deployment("y", "web2", map[string]string{"tier": "web"}),
		deployment("x", "db", map[string]string{"tier": "db"}),
	)
	watched := informer.Scope{Namespaces: []string{"b", "a", "a"}}
	pods, err := informer.ForScope[*corev1.Pod](e.factory, watched)
	require.NoError(t, err)
	nodes, err := informer.ForScope[*corev1.Node](e.factory, watched) // cluster-scoped: the namespaces do not apply
	require.NoError(t, err)
	deps, err := informer.ForScope[*appsv1.Deployment](e.factory, informer.Scope{LabelSelector: "tier=web"})
	require.NoError(t, err)
	require.Equal(t, []string{"pods{namespaces=a,b}", "nodes", "deployments.apps{namespaces=*; labels=tier=web}"},
		[]string{pods.Name(), nodes.Name(), deps.Name()})
	rec := &recorder{}
	podHandler, err := pods.AddEventHandler(rec.handler(), informer.HandlerOptions{})
	require.NoError(t, err)

	e.start(t)
	require.Equal(t, map[string]bool{pods.Name(): true, nodes.Name(): true, deps.Name(): true},
		e.factory.WaitForCacheSync(e.ctx), "three informers, each listed under its scope's name")
	require.True(t, pods.HasSynced())
	require.True(t, informer.WaitForCacheSync(e.ctx, podHandler), "the handler synced with both namespaces")

	// What reaches the server: four watches, pods' one per namespace.
	want := []string{
		`deployments ns="" labels="tier=web"`,
		`nodes ns="" labels=""`,
		`pods ns="a" labels=""`,
		`pods ns="b" labels=""`,
	}
	var ids map[string]uint64
	require.Eventually(t, func() bool {
		var lines []string
		lines, ids = watchesOn(e.srv)
		return slices.Equal(lines, want)
	}, waitFor, 5*time.Millisecond, "the server's watches")

	// What each lister returns.
	pl := pods.Lister()
	all, err := pl.List(labels.Everything())
	require.NoError(t, err)
	require.Equal(t, []string{"a/p1", "b/p2"}, keysOf(all), "pods: a and b merged")
	inA, err := pl.Namespace("a").List(labels.Everything())
	require.NoError(t, err)
	require.Equal(t, []string{"a/p1"}, keysOf(inA))
	inC, err := pl.Namespace("c").List(labels.Everything())
	require.NoError(t, err)
	require.Empty(t, inC, "c is not watched")
	_, err = pl.Namespace("b").Get("p2")
	require.NoError(t, err)
	_, err = pl.Get("c", "p3")
	require.True(t, apierrors.IsNotFound(err), "c/p3: %v", err)
	require.Len(t, pods.Informers(), 2)
	inB, err := pods.Informers()["b"].Lister().List(labels.Everything())
	require.NoError(t, err)
	require.Equal(t, []string{"b/p2"}, keysOf(inB), "b's own cache holds b alone")
	ns, err := nodes.Lister().List(labels.Everything())
	require.NoError(t, err)
	require.Equal(t, []string{"n1", "n2"}, keysOf(ns))
	ds, err := deps.Lister().List(labels.Everything())
	require.NoError(t, err)
	require.Equal(t, []string{"x/web", "y/web2"}, keysOf(ds))

	// One handler hears both namespaces, and nothing of c.
	for _, p := range []*corev1.Pod{pod("a", "p4", nil), pod("b", "p5", nil), pod("c", "p6", nil)} {
		_, err := e.srv.Create(p)
		require.NoError(t, err)
	}
	rec.waitFor(t, "add(initial) p1", "add(initial) p2", "add p4", "add p5")

	// Remove the pods informer: its two watches close, the others' stay.
	require.NoError(t, e.factory.Remove(e.ctx, pods.Name()))
	select {
	case <-pods.Done():
	default:
		t.Fatal("Remove returned before the pods informer stopped")
	}
	for _, inf := range pods.Informers() {
		require.True(t, isDone(inf.Done()), "a namespace's informer still runs")
	}
	require.Eventually(t, func() bool {
		lines, _ := watchesOn(e.srv)
		return slices.Equal(lines, want[:2])
	}, waitFor, 5*time.Millisecond, "the pods watches are closed")
	_, now := watchesOn(e.srv)
	for _, line := range want[:2] {
		require.Equal(t, ids[line], now[line], "%s was reopened", line)
	}
	require.Equal(t, map[string]bool{nodes.Name(): true, deps.Name(): true}, e.factory.WaitForCacheSync(e.ctx))

	// The others carry on; the removed one hears nothing.
	heard := len(rec.seen())
	_, err = e.srv.Create(pod("a", "p7", nil))
	require.NoError(t, err)
	_, err = e.srv.Create(node("n3"))
	require.NoError(t, err)
	_, err = e.srv.Create(deployment("z", "web3", map[string]string{"tier": "web"}))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, errN := nodes.Lister().Get("", "n3")
		_, errD := deps.Lister().Namespace("z").Get("web3")
		return errN == nil && errD == nil
	}, waitFor, 5*time.Millisecond, "nodes and deployments still follow the server")
	require.Len(t, rec.seen(), heard, "the removed informer's handler was called")
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestScopeNamesTheInformer: the factory's own scope, however it is
// asked for, is one informer (For and ForScope with Scope{} or the same
// namespace); a scope that selects the same objects in other words is the
// same informer; two scopes of one type are two informers, with two names.
func TestScopeNamesTheInformer(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{Namespace: "a"})
	plain, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	for _, s := range []informer.Scope{{}, {Namespaces: []string{"a"}}} {
		same, err := informer.ForScope[*corev1.Pod](e.factory, s)
		require.NoError(t, err)
		require.Equal(t, "pods", same.Name())
		require.Same(t, plain, same.Informers()["a"], "scope %+v", s)
	}
	ab, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{Namespaces: []string{"a", "b"}})
	require.NoError(t, err)
	ba, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{Namespaces: []string{"b", "a"}})
	require.NoError(t, err)
	require.Same(t, ab, ba, "the same namespaces in another order")
	sel1, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{LabelSelector: "y=2,x=1"})
	require.NoError(t, err)
	sel2, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{LabelSelector: "x=1, y=2"})
	require.NoError(t, err)
	require.Same(t, sel1.Informers()["a"], sel2.Informers()["a"], "one selector written two ways")
	every, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{Namespaces: []string{""}})
	require.NoError(t, err)
	require.Equal(t, []string{"pods", "pods{namespaces=*}", "pods{namespaces=a,b}", "pods{namespaces=a; labels=x=1,y=2}"},
		slices.Sorted(maps.Keys(e.factory.WaitForCacheSync(canceled()))))
	require.Equal(t, "pods{namespaces=*}", every.Name())
	_, hasAll := every.Informers()[""]
	require.True(t, hasAll, "one watch of every namespace")
}

// TestForScopeRefusesWhatCannotBeWatched: each bad scope is an error
// wrapping ErrInvalidScope, and no informer is made for it.
func TestForScopeRefusesWhatCannotBeWatched(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope informer.Scope
	}{
		{"every namespace among others", informer.Scope{Namespaces: []string{"a", ""}}},
		{"not a namespace name", informer.Scope{Namespaces: []string{"a/b"}}},
		{"upper case", informer.Scope{Namespaces: []string{"Shop"}}},
		{"label selector", informer.Scope{LabelSelector: "app in (web"}},
		{"field selector", informer.Scope{FieldSelector: "spec.nodeName"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, informer.FactoryOptions{})
			_, err := informer.ForScope[*corev1.Pod](e.factory, tc.scope)
			require.ErrorIs(t, err, informer.ErrInvalidScope)
			require.Empty(t, e.factory.WaitForCacheSync(canceled()), "an informer was made")
		})
	}
	t.Run("a ListerWatcher of the factory's own", func(t *testing.T) {
		e := newEnv(t, informer.FactoryOptions{
			ListerWatcher: func(informer.Resource, bool) (reflector.ListerWatcher, error) {
				return nil, fmt.Errorf("not called")
			},
		})
		_, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{Namespaces: []string{"a", "b"}})
		require.ErrorIs(t, err, informer.ErrInvalidScope)
	})
}

// TestScopedHandlerIsCalledOneAtATime: a handler of a scope of two
// namespaces is called by two informers, and still never twice at once.
// Its unguarded slice is the check: without the informer's lock, the race
// detector reports the two informers' goroutines writing it.
func TestScopedHandlerIsCalledOneAtATime(t *testing.T) {
	var objs []runtime.Object
	for i := range 20 {
		objs = append(objs, pod("a", fmt.Sprint("a-", i), nil), pod("b", fmt.Sprint("b-", i), nil))
	}
	e := newEnv(t, informer.FactoryOptions{}, objs...)
	pods, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{Namespaces: []string{"a", "b"}})
	require.NoError(t, err)
	var heard []string // no lock: the handler's calls must not overlap
	reg, err := pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod, _ bool) { heard = append(heard, p.Namespace+"/"+p.Name) },
	}, informer.HandlerOptions{})
	require.NoError(t, err)
	e.start(t)
	require.True(t, informer.WaitForCacheSync(e.ctx, reg))
	require.Len(t, reg.Registrations(), 2)
	require.NoError(t, reg.Remove(e.ctx)) // after it, the handler's goroutines are gone
	require.Len(t, heard, 40)
}

// A program told by its environment which namespaces to watch
// (WATCH_NAMESPACE=a,b, as operators are): pods in those namespaces, one
// watch each, read through one lister; nodes everywhere, as a node has no
// namespace; both from one factory.
func ExampleForScope() {
	srv := mustServe(pod("a", "web-1", nil), pod("b", "web-2", nil), pod("c", "web-3", nil), node("node-1"))
	defer srv.Close()
	watchNamespace := "a,b" // os.Getenv("WATCH_NAMESPACE")

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	watched := informer.Scope{Namespaces: strings.Split(watchNamespace, ",")}
	pods, err := informer.ForScope[*corev1.Pod](factory, watched)
	if err != nil {
		log.Fatal(err)
	}
	nodes, err := informer.ForScope[*corev1.Node](factory, watched)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx)

	all, _ := pods.Lister().List(labels.Everything())
	inB, _ := pods.Lister().Namespace("b").List(labels.Everything())
	everyNode, _ := nodes.Lister().List(labels.Everything())
	fmt.Println(pods.Name(), keysOf(all), "b:", keysOf(inB))
	fmt.Println(nodes.Name(), keysOf(everyNode))
	// Output:
	// pods{namespaces=a,b} [a/web-1 b/web-2] b: [b/web-2]
	// nodes [node-1]
}

// TestScopedInformerOfSeveralNamespacesBeforeAndAfterStart: removed
// before Start, a scope of two namespaces never runs and its Done closes;
// asked for after Start, it starts at once, and a handler added while it
// runs syncs with both namespaces.
func TestScopedInformerOfSeveralNamespacesBeforeAndAfterStart(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{}, pod("a", "p1", nil), pod("b", "p2", nil))
	early, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{Namespaces: []string{"a", "b"}})
	require.NoError(t, err)
	require.NoError(t, e.factory.Remove(e.ctx, early.Name()))
	require.True(t, isDone(early.Done()), "Done is still open after Remove")
	require.ErrorIs(t, early.Run(e.ctx), informer.ErrAlreadyRunning, "a removed informer does not start")

	e.factory.Start(e.ctx)
	late, err := informer.ForScope[*corev1.Pod](e.factory, informer.Scope{Namespaces: []string{"a", "b"}})
	require.NoError(t, err)
	require.NotSame(t, early, late)
	require.True(t, informer.WaitForCacheSync(e.ctx, late))
	rec := &recorder{}
	reg, err := late.AddEventHandler(rec.handler(), informer.HandlerOptions{})
	require.NoError(t, err)
	require.True(t, informer.WaitForCacheSync(e.ctx, reg), "a handler added while running syncs")
	rec.waitFor(t, "add(initial) p1", "add(initial) p2")
	require.ErrorIs(t, late.Run(e.ctx), informer.ErrAlreadyRunning, "the factory runs it")
}
