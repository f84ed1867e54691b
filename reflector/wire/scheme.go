package wire

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
)

// defaultScheme is built once, on first use, and only ever read afterwards:
// building it walks hundreds of types by reflection, too slow to repeat for
// every ListerWatcher. It is never handed out, so nobody can mutate it.
var defaultScheme = sync.OnceValue(apiresource.NewScheme)

// kindForResource finds the kind served under gvr: the kind K of gvr's group
// version whose guessed plural (apiresource.Guess: Pod -> pods, Endpoints ->
// endpoints, Policy -> policies) is gvr.Resource and for which "KList" is also known. Only
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
		if apiresource.Guess(gvr.GroupVersion().WithKind(kind)).Plural == gvr.Resource {
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
