package wire

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NewScheme returns a new scheme knowing meta/v1 (Status, ListOptions,
// PartialObjectMetadata), core/v1 and apps/v1: the Go types a
// ListerWatcher decodes into by default. Add your own groups to it and pass
// it as Options.Scheme to watch other built-in resources.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	// The registration functions only fail on programmer error (a type
	// registered twice with different names); panic would hide nothing.
	for _, add := range []func(*runtime.Scheme) error{
		metav1.AddMetaToScheme,
		corev1.AddToScheme,
		appsv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("wire: building default scheme: %v", err))
		}
	}
	return s
}

// defaultScheme is built once, on first use, and only ever read afterwards:
// building it walks hundreds of types by reflection, too slow to repeat for
// every ListerWatcher. It is never handed out, so nobody can mutate it.
var defaultScheme = sync.OnceValue(NewScheme)

// kindForResource finds the kind served under gvr: the kind K of gvr's group
// version whose guessed plural (Pod -> pods, Endpoints -> endpoints, Policy ->
// policies) is gvr.Resource and for which "KList" is also known. Only
// resources that can be listed have a List kind, which rules out look-alike
// option types.
func kindForResource(s *runtime.Scheme, gvr schema.GroupVersionResource) (string, error) {
	known := s.KnownTypes(gvr.GroupVersion())
	var matches []string
	for kind := range known {
		if strings.HasSuffix(kind, "List") {
			continue
		}
		if _, ok := known[kind+"List"]; !ok {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvr.GroupVersion().WithKind(kind))
		if plural.Resource == gvr.Resource {
			matches = append(matches, kind)
		}
	}
	sort.Strings(matches)
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("%w: no kind in %s is served as %q; register it or set Options.Kind", ErrUnknownKind, gvr.GroupVersion(), gvr.Resource)
	default:
		return "", fmt.Errorf("%w: kinds %v all map to %q; set Options.Kind", ErrUnknownKind, matches, gvr.Resource)
	}
}
