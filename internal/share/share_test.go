package share

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/realobj"
	"github.com/seed31a95821/informer/internal/realpod"
)

func mapID(m any) uintptr { return reflect.ValueOf(m).Pointer() }

func sameString[S ~string](a, b S) bool {
	return unsafe.StringData(string(a)) == unsafe.StringData(string(b))
}

// decoded is what the wire hands on: obj with its strings interned.
func decoded[T runtime.Object](t *Table, obj T) T {
	t.Strings(obj)
	return obj
}

// Sharing changes which map an object points to, never what it holds.
func TestObjectsSharesEqualValuesOnly(t *testing.T) {
	var tbl Table
	apply := tbl.Objects(nil)
	var pods []*corev1.Pod
	for i := range 2 * realpod.Replicas {
		p := decoded(&tbl, realpod.New(i))
		want := p.DeepCopy()
		got, err := apply(p)
		require.NoError(t, err)
		require.True(t, equality.Semantic.DeepEqual(want, got), "pod %d changed", i)
		pods = append(pods, got.(*corev1.Pod))
	}
	a, b, other := pods[0], pods[1], pods[realpod.Replicas]
	assert.Equal(t, mapID(a.Labels), mapID(b.Labels), "one deployment's labels")
	assert.NotEqual(t, mapID(a.Labels), mapID(other.Labels), "another deployment's labels")
	assert.Equal(t, mapID(a.Spec.Containers[1].Resources.Limits), mapID(other.Spec.Containers[1].Resources.Limits), "equal limits of two templates")
	assert.Same(t, &a.Spec.Containers[0], &b.Spec.Containers[0], "one template's containers")
	assert.NotSame(t, &a.Spec.Containers[0], &other.Spec.Containers[0], "another image")
	assert.Same(t, &a.Spec.Tolerations[0], &other.Spec.Tolerations[0], "the default tolerations")
	assert.Same(t, &a.OwnerReferences[0], &b.OwnerReferences[0], "one owner")
	assert.Same(t, &a.ManagedFields[0].FieldsV1.Raw[0], &b.ManagedFields[0].FieldsV1.Raw[0], "one owner's managedFields")
	assert.NotSame(t, &a.ManagedFields[1].FieldsV1.Raw[0], &b.ManagedFields[1].FieldsV1.Raw[0], "each pod's own status fields")
	assert.True(t, sameString(b.Status.ContainerStatuses[1].ImageID, other.Status.ContainerStatuses[1].ImageID), "strings (the first pod's are its own: doorkeeper.go)")
	assert.False(t, sameString(a.Name, b.Name), "names are not interned")
}

// The two passes keep to their own: Strings never replaces a map or a
// slice (a Transform may still modify them), Share never a string.
func TestStringsAndShareKeepToTheirOwn(t *testing.T) {
	var tbl Table
	a, b := realpod.New(0), realpod.New(1)
	tbl.Strings(a)
	labels, containers := mapID(b.Labels), &b.Spec.Containers[0]
	tbl.Strings(b)
	assert.Equal(t, labels, mapID(b.Labels))
	assert.Same(t, containers, &b.Spec.Containers[0])
	assert.True(t, sameString(a.Labels["app"], b.Labels["app"]))

	c, d := realpod.New(0), realpod.New(1)
	tbl.Share(c)
	tbl.Share(d)
	assert.Equal(t, mapID(c.Labels), mapID(d.Labels))
	assert.False(t, sameString(c.Namespace, d.Namespace), "Share leaves strings alone")
}

// Quantities that compare equal but print differently are different
// values to a reader, and are not shared.
func TestResourceListsDifferingOnlyInFormStayApart(t *testing.T) {
	var tbl Table
	mk := func(q string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}}}}}
	}
	a, b, c := mk("1Gi"), mk("1073741824"), mk("1Gi")
	c.Spec.Containers[0].Name = "other" // another slice, the same list
	tbl.Share(a)
	tbl.Share(b)
	tbl.Share(c)
	assert.NotEqual(t, mapID(a.Spec.Containers[0].Resources.Limits), mapID(b.Spec.Containers[0].Resources.Limits))
	assert.Equal(t, "1073741824", b.Spec.Containers[0].Resources.Limits.Memory().String())
	assert.Equal(t, mapID(a.Spec.Containers[0].Resources.Limits), mapID(c.Spec.Containers[0].Resources.Limits))
}

// Lists whose quantities differ in a few bits of their floats, at the same
// places, each find their own entry, whatever the table's seed: a hash
// that summed such entries unmixed made {cpu: 1, memory: 512Mi} and
// {cpu: 500m, memory: 256Mi} collide under one seed in eight, and the
// second list was never kept (issue 33).
func TestNearbyResourceListsAreKeptUnderEverySeed(t *testing.T) {
	list := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	lists := [][2]string{{"250m", "256Mi"}, {"1", "512Mi"}, {"100m", "128Mi"}, {"500m", "256Mi"}, {"2", "1Gi"}, {"125m", "128Mi"}}
	for seed := range 500 {
		var tbl Table // a fresh seed each time
		tbl.lock()
		for _, l := range lists {
			first := tbl.resourceList(list(l[0], l[1]))
			again := tbl.resourceList(list(l[0], l[1]))
			require.Equal(t, mapID(first), mapID(again), "table %d: %v is kept", seed, l)
		}
		tbl.mu.Unlock()
	}
}

func TestObjectsRunsTheTransformFirst(t *testing.T) {
	var tbl Table
	boom := errors.New("boom")
	_, err := tbl.Objects(func(runtime.Object) (runtime.Object, error) { return nil, boom })(&corev1.Pod{})
	require.ErrorIs(t, err, boom)
	got, err := tbl.Objects(func(o runtime.Object) (runtime.Object, error) {
		o.(*corev1.Pod).Labels = map[string]string{"set": "by transform"}
		return o, nil
	})(&corev1.Pod{})
	require.NoError(t, err)
	assert.Equal(t, "by transform", got.(*corev1.Pod).Labels["set"])
}

// A value whose hash another value holds is not shared: a hash says where
// to look, equality decides.
func TestAHashCollisionSharesNothing(t *testing.T) {
	var tbl Table
	tbl.lock()
	defer tbl.mu.Unlock()
	a, b := []byte("one"), []byte("two")
	same := func(x []byte) func([]byte) bool { return func(kept []byte) bool { return bytes.Equal(kept, x) } }
	findBytes := find[[]byte, sliceHolder[byte]]
	assert.Equal(t, "one", string(findBytes(&tbl, 42, a, 3, same(a))))
	got := findBytes(&tbl, 42, b, 3, same(b))
	assert.Same(t, &b[0], &got[0], "the colliding value is its own")
	assert.Same(t, &a[0], &findBytes(&tbl, 42, []byte("one"), 3, same(a))[0], "the first keeps its place")
	m := map[string]string{"a": "b"}
	got2 := find[map[string]string, mapHolder[map[string]string]](&tbl, 42, m, 3, func(map[string]string) bool { return true })
	assert.Equal(t, mapID(m), mapID(got2), "another type under the same hash")
	goruntime.KeepAlive(a)
}

// The table holds what it keeps weakly: a value that no object holds any
// more is collected, and its entry gives way (issue 33: after a churn the
// table kept every pod's previous annotations alive, 0.7 KB a pod).
func TestAValueNobodyHoldsIsCollected(t *testing.T) {
	var tbl Table
	p := decoded(&tbl, realpod.New(0))
	p.Annotations["own"] = "this pod's alone" // met once
	tbl.Share(p)
	collected := weak.Make(&p.ManagedFields[1].FieldsV1.Raw[0])
	annotations := weak.Make((*byte)(reflect.ValueOf(p.Annotations).UnsafePointer()))
	labels := p.Labels // a sibling still holds these
	p = nil
	require.Eventually(t, func() bool {
		goruntime.GC()
		return annotations.Value() == nil && collected.Value() == nil
	}, 10*time.Second, time.Millisecond, "the pod's own values are collected")

	sibling := decoded(&tbl, realpod.New(1))
	tbl.Share(sibling)
	assert.Equal(t, mapID(labels), mapID(sibling.Labels), "a value still held is still shared")
	before := tbl.Stats().Values
	tbl.lock()
	tbl.age()
	tbl.mu.Unlock()
	assert.Less(t, tbl.Stats().Values, before, "aging drops the entries of collected values")

	// Under the hash of a collected value, a new value is kept.
	tbl.lock()
	defer tbl.mu.Unlock()
	findBytes := find[[]byte, sliceHolder[byte]]
	same := func(x []byte) func([]byte) bool { return func(kept []byte) bool { return bytes.Equal(kept, x) } }
	func() {
		x := bytes.Repeat([]byte("x"), 64)
		findBytes(&tbl, 7, x, 64, same(x))
	}()
	y := bytes.Repeat([]byte("y"), 64)
	require.Eventually(t, func() bool {
		goruntime.GC()
		return &findBytes(&tbl, 7, y, 64, same(y))[0] == &y[0] &&
			&findBytes(&tbl, 7, bytes.Clone(y), 64, same(y))[0] == &y[0]
	}, 10*time.Second, time.Millisecond, "y takes the collected x's place")
}

// Pods arrive in random order, siblings far apart, many more templates
// than a fixed array of slots has room for: every template's values are
// still found when their twins arrive (issue 33: after a random-order
// churn a fixed table lost most of them).
func TestSharingDoesNotDependOnArrivalOrder(t *testing.T) {
	const deployments = 800
	var tbl Table
	order := rand.New(rand.NewPCG(1, 2)).Perm(deployments * realpod.Replicas)
	labels := map[string]map[uintptr]bool{}
	containers := map[string]map[*corev1.Container]bool{}
	var cache []*corev1.Pod // what the table shares is what cached objects hold
	for _, i := range order {
		p := decoded(&tbl, realpod.New(i))
		tbl.Share(p)
		cache = append(cache, p)
		app := p.Labels["app"]
		if labels[app] == nil {
			labels[app], containers[app] = map[uintptr]bool{}, map[*corev1.Container]bool{}
		}
		labels[app][mapID(p.Labels)] = true
		containers[app][&p.Spec.Containers[0]] = true
	}
	require.Len(t, labels, deployments)
	for app := range labels {
		assert.Len(t, labels[app], 1, "%s: its pods' labels are one map", app)
		assert.Len(t, containers[app], 1, "%s: its pods' containers are one slice", app)
	}
	assert.LessOrEqual(t, tbl.Stats().Bytes, DefaultBudget)
	goruntime.KeepAlive(cache)
}

// Only distinct values: the table ages within its budget, never past it,
// and forgets what it met once before what it keeps meeting, however
// recent the former.
func TestTableStaysWithinItsBudgetAndKeepsWhatRepeats(t *testing.T) {
	tbl := Table{Budget: 256 << 10}
	popular := func() *metav1.PartialObjectMetadata {
		p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "popular",
			Labels: map[string]string{"app": "popular", "tier": "web"}}}
		tbl.Strings(p)
		tbl.Share(p)
		return p
	}
	first := popular()
	long := strings.Repeat("x", maxString+1)
	for i := range 30_000 {
		// The namespace twice, so that the doorkeeper lets it in.
		o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprint("ns-", i),
			Labels: map[string]string{"k": fmt.Sprint("ns-", i), "long": long}}}
		tbl.Strings(o)
		tbl.Share(o)
		require.LessOrEqual(t, tbl.Stats().Bytes, tbl.Budget, "after %d distinct objects", i)
		if i%100 == 0 {
			p := popular()
			require.True(t, sameString(first.Namespace, p.Namespace), "a string met every 100 objects, after %d", i)
			require.Equal(t, mapID(first.Labels), mapID(p.Labels), "a map met every 100 objects, after %d", i)
		}
	}
	// The last object's strings were kept as it arrived. How many others
	// are left depends on where the last ageing fell, and so on what the
	// collector had freed by then (a value nobody holds gives its place).
	last := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprint("ns-", 29_999)}}
	tbl.Strings(last)
	assert.Equal(t, uint8(2), tbl.strs[last.Namespace].hits, "the table is in use: it kept the last object's namespace")
	st := tbl.Stats()
	assert.Less(t, st.Strings+st.Values, 10_000, "it forgot what it met once")
	for k := range tbl.strs {
		assert.LessOrEqual(t, len(k), maxString)
	}

	var none *Table
	none.Strings(&corev1.Pod{}) // a nil table does nothing, and does not panic
	none.Share(&corev1.Pod{})
	assert.Zero(t, none.Stats())
}

// Secrets share data only with data equal byte for byte: a whole map, or
// the values two maps have in common.
func TestSecretsShareOnlyEqualData(t *testing.T) {
	var tbl Table
	var secrets []*corev1.Secret
	for i := range 12 {
		s := realobj.Secret(i)
		want := s.DeepCopy()
		tbl.Strings(s)
		tbl.Share(s)
		require.True(t, equality.Semantic.DeepEqual(want, s), "secret %d changed", i)
		secrets = append(secrets, s)
	}
	tokenA, tokenB := secrets[0], secrets[4]
	assert.NotEqual(t, mapID(tokenA.Data), mapID(tokenB.Data), "each token is its own")
	assert.Same(t, &tokenA.Data["ca.crt"][0], &tokenB.Data["ca.crt"][0], "the cluster's CA is one")
	assert.NotEqual(t, tokenA.Data["token"], tokenB.Data["token"])
	assert.Equal(t, mapID(secrets[1].Data), mapID(secrets[5].Data), "the pull secret, equal in every namespace")

	x := &corev1.Secret{Data: map[string][]byte{"k": []byte("v1")}}
	y := &corev1.Secret{Data: map[string][]byte{"k": []byte("v2")}}
	tbl.Share(x)
	tbl.Share(y)
	assert.Equal(t, "v2", string(y.Data["k"]))
	assert.NotEqual(t, mapID(x.Data), mapID(y.Data))
}

// The other kinds' walkers share what repeats and change nothing.
func TestOtherKindsShareWhatRepeats(t *testing.T) {
	var tbl Table
	share := func(o runtime.Object) runtime.Object {
		want := o.DeepCopyObject()
		tbl.Strings(o)
		tbl.Share(o)
		require.True(t, equality.Semantic.DeepEqual(want, o), "%T changed", o)
		return o
	}
	cm0, cm5 := share(realobj.ConfigMap(0)).(*corev1.ConfigMap), share(realobj.ConfigMap(5)).(*corev1.ConfigMap)
	assert.Equal(t, mapID(cm0.Data), mapID(cm5.Data), "every namespace's kube-root-ca.crt")
	cm3, cm4 := share(realobj.ConfigMap(3)).(*corev1.ConfigMap), share(realobj.ConfigMap(4)).(*corev1.ConfigMap)
	assert.NotEqual(t, mapID(cm3.Data), mapID(cm4.Data))

	n0, n3 := share(realobj.Node(0)).(*corev1.Node), share(realobj.Node(3)).(*corev1.Node)
	assert.Equal(t, mapID(n0.Status.Capacity), mapID(n3.Status.Capacity))
	assert.Same(t, &n0.Status.Images[0], &n3.Status.Images[0], "one pool's images")
	assert.True(t, sameString(n0.Status.NodeInfo.KubeletVersion, n3.Status.NodeInfo.KubeletVersion))

	d := share(realobj.Deployment(0)).(*appsv1.Deployment)
	rs := share(realobj.ReplicaSet(0)).(*appsv1.ReplicaSet)
	assert.Same(t, &d.Spec.Template.Spec.Containers[0], &rs.Spec.Template.Spec.Containers[0], "a template and its ReplicaSet's")
	assert.Equal(t, mapID(d.Spec.Template.Labels), mapID(rs.Spec.Template.Labels))
	pod := share(realpod.New(0)).(*corev1.Pod)
	assert.Same(t, &d.Spec.Template.Spec.Volumes[0], &pod.Spec.Volumes[0], "and its pods'")
}

// realPods is realistic pods 0..n-1 (internal/realpod).
func realPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = realpod.New(i)
	}
	return pods
}

// BenchmarkShare is what sharing adds to each decoded pod, to be read
// against the cost of decoding one (BenchmarkWatchDecode in reflector/wire).
// Its figures and profile are in docs/perf-log.md.
//
//	go test -run '^$' -bench Share -benchmem ./internal/share/
func BenchmarkShare(b *testing.B) {
	src := realPods(1000)
	var tbl Table
	var batch []*corev1.Pod
	b.ReportAllocs()
	for b.Loop() {
		if len(batch) == 0 { // fresh copies, a thousand at a time, off the clock
			b.StopTimer()
			for _, p := range src {
				batch = append(batch, p.DeepCopy())
			}
			b.StartTimer()
		}
		tbl.Share(batch[len(batch)-1])
		batch = batch[:len(batch)-1]
	}
}

// BenchmarkStrings is what interning adds to each decoded pod.
//
//	go test -run '^$' -bench Strings -benchmem ./internal/share/
func BenchmarkStrings(b *testing.B) {
	src := realPods(1000)
	var tbl Table
	var batch []*corev1.Pod
	b.ReportAllocs()
	for b.Loop() {
		if len(batch) == 0 {
			b.StopTimer()
			for _, p := range src {
				batch = append(batch, p.DeepCopy())
			}
			b.StartTimer()
		}
		tbl.Strings(batch[len(batch)-1])
		batch = batch[:len(batch)-1]
	}
}

// A shared pod's emptyDir size limits are in canonical form when Share
// returns, even in a volume slice too large for the table to render
// whole: printing one later (a handler, or render for another pod) then
// only reads it, and never writes a value other goroutines hold.
func TestShareLeavesEverySizeLimitCanonical(t *testing.T) {
	var tbl Table
	pod := &corev1.Pod{}
	blob := strings.Repeat("x", 250)
	for i := range 400 { // about 100 KB of volumes, past maxValue
		q, err := resource.ParseQuantity("1024Mi")
		require.NoError(t, err)
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name:         fmt.Sprintf("v-%d-%s", i, blob),
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &q}},
		})
	}
	require.False(t, quantityPrinted(pod.Spec.Volumes[399].EmptyDir.SizeLimit), "parsed, not printed yet")
	tbl.Share(pod)
	for i, v := range pod.Spec.Volumes {
		require.True(t, quantityPrinted(v.EmptyDir.SizeLimit), "volume %d", i)
	}
}

// quantityPrinted reports whether q holds its printed form, which String
// writes the first time.
func quantityPrinted(q *resource.Quantity) bool {
	return reflect.ValueOf(q).Elem().FieldByName("s").Len() > 0
}

// An entry is small: after a churn of 10k pods the table holds some 35,000
// values and 30,000 strings, each in a map slot beside its key; at 72
// bytes a value's slot was half a KB a pod (docs/perf-log.md).
func TestEntriesAreSixteenBytes(t *testing.T) {
	assert.Equal(t, uintptr(16), unsafe.Sizeof(valueEntry{}))
	assert.Equal(t, uintptr(16), unsafe.Sizeof(stringEntry{}))
}

// Each type the table keeps has a number of its own, and a value is
// rebuilt only as the type it was kept as.
func TestAValueIsRebuiltOnlyAsItsType(t *testing.T) {
	ids := []uint8{typeID[[]byte](), typeID[map[string]string](), typeID[map[string][]byte](), typeID[corev1.ResourceList](),
		typeID[[]corev1.Container](), typeID[[]corev1.Volume](), typeID[[]corev1.Toleration](), typeID[[]metav1.OwnerReference](),
		typeID[[]corev1.Taint](), typeID[[]corev1.ContainerImage](), typeID[[]corev1.PodSecurityContext](), typeID[[]corev1.Affinity]()}
	seen := map[uint8]bool{}
	for _, id := range ids {
		assert.False(t, seen[id], "typeID %d twice", id)
		assert.Zero(t, id&rawKept, "typeID %d uses rawKept's bit", id)
		seen[id] = true
	}
	assert.Panics(t, func() { typeID[[]string]() })
	m := map[string]string{"a": "b"}
	e := holdWeakly[map[string]string, mapHolder[map[string]string]](m)
	_, ok := get[corev1.ResourceList, mapHolder[corev1.ResourceList]](e)
	assert.False(t, ok, "a map of strings is not a resource list")
	got, ok := get[map[string]string, mapHolder[map[string]string]](e)
	require.True(t, ok)
	assert.Equal(t, mapID(m), mapID(got))
	goruntime.KeepAlive(m)
}

// A value that would cost more than maxCost is not kept: its cost must fit
// an entry's 16 bits. A resource list is charged by its entries, and a
// server may send thousands.
func TestAValueTooCostlyIsNotKept(t *testing.T) {
	var tbl Table
	big := corev1.ResourceList{}
	for i := range maxCost/(64+mapEntryOverhead) + 1 {
		big[corev1.ResourceName(fmt.Sprintf("example.com/r%d", i))] = resource.MustParse("1")
	}
	tbl.lock()
	defer tbl.mu.Unlock()
	got := tbl.resourceList(big)
	assert.Equal(t, mapID(big), mapID(got))
	assert.Zero(t, len(tbl.vals), "not kept")
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	tbl.resourceList(small)
	assert.Equal(t, 1, len(tbl.vals))
}

// A string found again leaves the kept copy as the map's key: Go's map
// stores the key of every assignment, and writing the count back with the
// caller's copy kept that copy alive, one a distinct string, which only
// the table held.
func TestAStringFoundAgainKeepsOneCopy(t *testing.T) {
	var tbl Table
	tbl.lock()
	defer tbl.mu.Unlock()
	const s = "registry.example.com/shop/cart:1.24"
	tbl.str(strings.Clone(s)) // met once: let in at the second meeting (doorkeeper.go)
	kept, again := strings.Clone(s), strings.Clone(s)
	tbl.str(kept)
	assert.True(t, sameString(kept, tbl.str(again)))
	require.Len(t, tbl.strs, 1)
	for k := range tbl.strs {
		assert.True(t, sameString(kept, k), "the map's key is the kept copy")
	}
}
