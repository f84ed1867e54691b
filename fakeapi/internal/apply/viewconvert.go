package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/fakeapi/internal/convert"
)

// viewConvertor is the object converter of the field managers: the
// scheme, plus the conversions between the two versions of a resource
// fakeapi serves side by side (fakeapi/internal/convert), which the scheme
// does not know. The field manager converts the live object to the version
// each manager wrote in, to compare their fields with the applier's, as the
// real server's does through its scheme; without these conversions an
// apply through one version fails (autoscaling) or drops the managers of
// the other (Events).
type viewConvertor struct{ *runtime.Scheme }

// ConvertToVersion converts in to target. The field manager hands it
// unstructured objects, which are made typed first.
func (v viewConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	if u, ok := in.(*unstructured.Unstructured); ok {
		typed, err := v.Scheme.New(u.GroupVersionKind())
		if err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, fmt.Errorf("fakeapi/internal/apply: reading a %s: %w", u.GroupVersionKind(), err)
		}
		typed.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
		in = typed
	}
	if kinds, _, err := v.Scheme.ObjectKinds(in); err == nil {
		for _, p := range convert.Pairs() {
			switch {
			case kinds[0] == p.View && wants(target, p.Stored):
				return p.ToStorage(in)
			case kinds[0] == p.Stored && wants(target, p.View):
				return p.FromStorage(in)
			}
		}
	}
	return v.Scheme.ConvertToVersion(in, target)
}

// wants tells whether target converts to exactly kind.
func wants(target runtime.GroupVersioner, kind schema.GroupVersionKind) bool {
	got, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{kind})
	return ok && got == kind
}
