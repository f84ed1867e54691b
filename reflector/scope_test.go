package reflector

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The rules of admitObject beyond the type: the scope a ListerWatcher
// declares (scope.go), and the names and namespaces a real object can have
// (validIdentity). One row per rule.
func TestScopeCheck(t *testing.T) {
	type obj struct {
		ns, name string
		labels   map[string]string
	}
	web := map[string]string{"app": "web", "tier": "front"}
	tests := []struct {
		name                     string
		namespace, label, fields string // the ListerWatcher's scope
		obj                      obj
		want                     error // nil: admitted
	}{
		{"no scope admits any namespace", "", "", "", obj{"other", "a", nil}, nil},
		{"no scope admits a cluster-scoped object", "", "", "", obj{"", "a", nil}, nil},
		{"the namespace asked for", "ns", "", "", obj{"ns", "a", nil}, nil},
		{"another namespace", "ns", "", "", obj{"other", "a", nil}, ErrOutOfScope},
		{"no namespace, when one was asked for", "ns", "", "", obj{"", "a", nil}, ErrOutOfScope},
		{"labels that match", "", "app=web", "", obj{"ns", "a", web}, nil},
		{"labels that do not match", "", "app=web", "", obj{"ns", "a", map[string]string{"app": "db"}}, ErrOutOfScope},
		{"no labels, when some were asked for", "", "app=web", "", obj{"ns", "a", nil}, ErrOutOfScope},
		{"a set-based selector", "", "tier in (front,back),!canary", "", obj{"ns", "a", web}, nil},
		{"a set-based selector excludes", "", "tier in (front,back),!canary", "", obj{"ns", "a", map[string]string{"tier": "front", "canary": ""}}, ErrOutOfScope},
		{"metadata.name= matches", "", "", "metadata.name=a", obj{"ns", "a", nil}, nil},
		{"metadata.name= excludes", "", "", "metadata.name=a", obj{"ns", "b", nil}, ErrOutOfScope},
		{"metadata.name!= excludes", "", "", "metadata.name!=a", obj{"ns", "a", nil}, ErrOutOfScope},
		{"metadata.namespace== excludes", "", "", "metadata.namespace==ns", obj{"other", "a", nil}, ErrOutOfScope},
		{"metadata.namespace!= admits", "", "", "metadata.namespace!=kube-system", obj{"ns", "a", nil}, nil},
		{"other fields are the server's alone", "", "", "spec.nodeName=n1,status.phase=Running", obj{"ns", "a", nil}, nil},
		{"a rule on another field beside one on the name", "", "", "spec.nodeName=n1,metadata.name=b", obj{"ns", "a", nil}, ErrOutOfScope},
		{"every part at once", "ns", "app=web", "metadata.name=a", obj{"ns", "a", web}, nil},
		{"a label selector that does not parse is not checked", "", "app=(", "", obj{"ns", "a", nil}, nil},

		{"a name with a slash", "", "", "", obj{"default", "a/b", nil}, ErrInvalidName},
		{"a namespace with a slash", "", "", "", obj{"default/a", "b", nil}, ErrInvalidName},
		{"a path", "", "", "", obj{"default", "../../etc", nil}, ErrInvalidName},
		{"dot-dot", "", "", "", obj{"default", "..", nil}, ErrInvalidName},
		{"dot", "", "", "", obj{"default", ".", nil}, ErrInvalidName},
		{"a percent sign", "", "", "", obj{"default", "a%2Fb", nil}, ErrInvalidName},
		{"an upper-case namespace", "", "", "", obj{"Default", "a", nil}, ErrInvalidName},
		{"a namespace with a dot", "", "", "", obj{"a.b", "a", nil}, ErrInvalidName},
		{"a namespace of 64 characters", "", "", "", obj{strings.Repeat("n", 64), "a", nil}, ErrInvalidName},
		{"a namespace of 63 characters", "", "", "", obj{strings.Repeat("n", 63), "a", nil}, nil},
		{"names Kubernetes allows", "", "", "", obj{"kube-system", "Upper_case.and:colons@x", nil}, nil},
		{"an invalid namespace, though it is the one asked for", "Default", "", "", obj{"Default", "a", nil}, ErrInvalidName},
		{"no name is the type check's", "", "", "", obj{"ns", "", nil}, ErrNoName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lw := &ListWatch{Namespace: tt.namespace, LabelSelector: tt.label, FieldSelector: tt.fields}
			r := New(lw, nopStore{}, Options{ExpectedType: &corev1.Pod{}})
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tt.obj.ns, Name: tt.obj.name, Labels: tt.obj.labels}}
			_, err := r.admitObject(p)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
			if !errors.Is(tt.want, ErrNoName) {
				assert.Equal(t, KindRefused, KindOf(err))
			}
			// Twice: a namespace remembered as valid stays checked.
			_, err = r.admitObject(p)
			assert.ErrorIs(t, err, tt.want, "the second time")
		})
	}
}

// The check runs once per event: an object in scope costs no allocation,
// with every part of a scope set.
func TestScopeCheckAllocatesNothing(t *testing.T) {
	lw := &ListWatch{Namespace: "ns", LabelSelector: "app=web,tier!=db", FieldSelector: "metadata.name!=b"}
	r := New(lw, nopStore{}, Options{ExpectedType: &corev1.Pod{}})
	p := pod("a", "1")
	p.Labels = map[string]string{"app": "web"}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := r.admitObject(p); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

// A refused message quotes at most maxQuoted bytes of a server's string.
func TestRefusalClipsLongNames(t *testing.T) {
	r := New(&ListWatch{}, nopStore{}, Options{})
	p := pod(strings.Repeat("x", 1<<20)+"/", "1")
	_, err := r.admitObject(p)
	assert.ErrorIs(t, err, ErrInvalidName)
	assert.Less(t, len(err.Error()), 400)
}
