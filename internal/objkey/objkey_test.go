package objkey

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func pod(namespace, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		obj  runtime.Object
		want string
		err  error
	}{
		{obj: pod("shop", "web"), want: "shop/web"},
		{obj: pod("", "node-1"), want: "node-1"},
		{obj: pod("shop", ""), err: ErrNoName},
		{obj: nil, err: ErrNilObject},
		{obj: (*corev1.Pod)(nil), err: ErrNilObject},
	} {
		got, err := Of(tc.obj)
		assert.ErrorIs(t, err, tc.err)
		assert.Equal(t, tc.want, got)
	}
	_, err := Of(&runtime.Unknown{})
	assert.Error(t, err, "an object without metadata has no key")
}

func TestJoinIsOf(t *testing.T) {
	for _, p := range []*corev1.Pod{pod("shop", "web"), pod("", "node-1")} {
		k, err := Of(p)
		assert.NoError(t, err)
		assert.Equal(t, k, Join(p.Namespace, p.Name))
	}
}

// TestAppendIsOf holds the fast path to the builder's format, and to
// Append's own promises: it appends, and leaves dst alone on error.
func TestAppendIsOf(t *testing.T) {
	long := pod("ns", strings.Repeat("n", 200)) // more than a stack buffer holds
	for _, p := range []*corev1.Pod{pod("shop", "web"), pod("", "node-1"), long} {
		k, err := Of(p)
		assert.NoError(t, err)
		b, err := Append([]byte("key: "), p)
		assert.NoError(t, err)
		assert.Equal(t, "key: "+k, string(b), "appends to what dst holds")
	}
	b, err := Append([]byte("x"), pod("ns", ""))
	assert.ErrorIs(t, err, ErrNoName)
	assert.Equal(t, "x", string(b), "dst unchanged on error")
	b, err = Append([]byte("x"), nil)
	assert.ErrorIs(t, err, ErrNilObject)
	assert.Equal(t, "x", string(b))
}

func TestIsNil(t *testing.T) {
	assert.True(t, IsNil(nil))
	assert.True(t, IsNil((*corev1.Pod)(nil)))
	assert.False(t, IsNil(pod("a", "b")))
	var nilList runtime.Object = (*corev1.PodList)(nil)
	assert.True(t, IsNil(nilList), "a typed nil in a runtime.Object")
	// Only a nil pointer counts: other kinds whose zero value is nil are
	// not objects, and a value that is not a pointer is never nil.
	assert.False(t, IsNil(map[string]int(nil)))
	assert.False(t, IsNil([]int(nil)))
	assert.False(t, IsNil(func() {}))
	assert.False(t, IsNil((func())(nil)))
	assert.False(t, IsNil(struct{ p *int }{}), "a struct of one nil pointer is stored like a pointer")
	assert.False(t, IsNil(0))
	assert.False(t, IsNil(corev1.Pod{}))
	// Stored as a nil word too, yet not pointers: looked up by kind.
	assert.False(t, IsNil([1]*int{}), "an array of one nil pointer")
	assert.False(t, IsNil((chan int)(nil)))
	// Stored behind a pointer the runtime made, never a nil word.
	assert.False(t, IsNil(struct{}{}))
	assert.False(t, IsNil(""))
}

// BenchmarkIsNil is the check the reflector, the queue and the cache each
// make of every object they are handed.
func BenchmarkIsNil(b *testing.B) {
	objs := []runtime.Object{pod("a", "b"), (*corev1.Pod)(nil)}
	n := 0
	for i := 0; b.Loop(); i++ {
		if IsNil(objs[i&1]) {
			n++
		}
	}
	if n == 0 {
		b.Fatal("no nil seen")
	}
}
