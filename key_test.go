package informer_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
)

func TestKeyOfAndSplitKey(t *testing.T) {
	key, err := informer.KeyOf(pod("shop", "web-1", nil))
	assert.NoError(t, err)
	assert.Equal(t, "shop/web-1", key)
	key, err = informer.KeyOf(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
	assert.NoError(t, err)
	assert.Equal(t, "node-1", key, "cluster-scoped")

	tests := []struct {
		key, namespace, name string
		valid                bool
	}{
		{"shop/web-1", "shop", "web-1", true},
		{"node-1", "", "node-1", true},
		{"", "", "", false},
		{"/web-1", "", "", false},
		{"shop/", "", "", false},
		{"a/b/c", "", "", false},
		{"/", "", "", false},
	}
	for _, tt := range tests {
		ns, name, err := informer.SplitKey(tt.key)
		if !tt.valid {
			var keyErr *informer.KeyError
			assert.ErrorAs(t, err, &keyErr, "%q", tt.key)
			assert.True(t, errors.Is(err, informer.ErrInvalidKey), "%q", tt.key)
			continue
		}
		assert.NoError(t, err, "%q", tt.key)
		assert.Equal(t, [2]string{tt.namespace, tt.name}, [2]string{ns, name}, "%q", tt.key)
	}
}

func TestUpdateFilters(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 1, Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"x": "1"}}}
	gen := base.DeepCopy()
	gen.Generation = 2
	lbl := base.DeepCopy()
	lbl.Labels["a"] = "2"
	ann := base.DeepCopy()
	ann.Annotations["y"] = "2"
	tests := []struct {
		name   string
		filter informer.UpdateFilter
		cur    *corev1.Pod
		want   bool
	}{
		{"generation: changed", informer.GenerationChanged, gen, true},
		{"generation: labels only", informer.GenerationChanged, lbl, false},
		{"labels: changed", informer.LabelsChanged, lbl, true},
		{"labels: annotations only", informer.LabelsChanged, ann, false},
		{"annotations: changed", informer.AnnotationsChanged, ann, true},
		{"annotations: generation only", informer.AnnotationsChanged, gen, false},
		{"any of: one passes", informer.AnyOf(informer.LabelsChanged, informer.AnnotationsChanged), ann, true},
		{"any of: none passes", informer.AnyOf(informer.LabelsChanged, informer.AnnotationsChanged), gen, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.filter(base, tt.cur), tt.name)
	}
}
