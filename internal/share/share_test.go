package share

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/realpod"
)

func mapID(m any) uintptr { return reflect.ValueOf(m).Pointer() }

// Sharing changes which map an object points to, never what it holds.
func TestObjectsSharesEqualValuesOnly(t *testing.T) {
	var tbl Table
	apply := tbl.Objects(nil)
	var pods []*corev1.Pod
	for i := range 2 * realpod.Replicas {
		p := realpod.New(i)
		want := p.DeepCopy()
		got, err := apply(p)
		require.NoError(t, err)
		require.True(t, equality.Semantic.DeepEqual(want, got), "pod %d changed", i)
		pods = append(pods, got.(*corev1.Pod))
	}
	a, b, other := pods[0], pods[1], pods[realpod.Replicas]
	assert.Equal(t, mapID(a.Labels), mapID(b.Labels), "one deployment's labels")
	assert.NotEqual(t, mapID(a.Labels), mapID(other.Labels), "another deployment's labels")
	assert.Equal(t, mapID(a.Spec.Containers[1].Resources.Limits), mapID(other.Spec.Containers[1].Resources.Limits))
	assert.Same(t, &a.Spec.Containers[0], &b.Spec.Containers[0], "one template's containers")
	assert.NotSame(t, &a.Spec.Containers[0], &other.Spec.Containers[0], "another image")
	assert.Same(t, &a.Spec.Tolerations[0], &other.Spec.Tolerations[0], "the default tolerations")
	assert.Same(t, &a.ManagedFields[0].FieldsV1.Raw[0], &b.ManagedFields[0].FieldsV1.Raw[0], "one owner's managedFields")
	assert.NotSame(t, &a.ManagedFields[1].FieldsV1.Raw[0], &b.ManagedFields[1].FieldsV1.Raw[0], "each pod's own status fields")
}

// Quantities that compare equal but print differently are different
// values to a reader, and are not shared.
func TestResourceListsDifferingOnlyInFormStayApart(t *testing.T) {
	var tbl Table
	mk := func(q string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}}}}}}
	}
	a, b := mk("1Gi"), mk("1073741824")
	tbl.Share(a)
	tbl.Share(b)
	assert.NotEqual(t, mapID(a.Spec.Containers[0].Resources.Limits), mapID(b.Spec.Containers[0].Resources.Limits))
	assert.Equal(t, "1073741824", b.Spec.Containers[0].Resources.Limits.Memory().String())
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

// Only distinct values: the table churns within its slots.
func TestTableIsBounded(t *testing.T) {
	var tbl Table
	for i := range 10 * slots {
		tbl.Share(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"k": fmt.Sprint(i)}}})
	}
	assert.Len(t, tbl.slot, slots)
	for _, e := range tbl.slot {
		assert.LessOrEqual(t, len(e.key)+len(e.raw), maxBytes+1)
	}
}

// BenchmarkShare is what sharing adds to each decoded pod, to be read
// against the cost of decoding one (BenchmarkWatchDecode in reflector/wire).
// Its figures and profile are in docs/perf-log.md.
//
//	go test -run '^$' -bench Share -benchmem ./internal/share/
func BenchmarkShare(b *testing.B) {
	src := make([]*corev1.Pod, 1000)
	for i := range src {
		src[i] = realpod.New(i)
	}
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
