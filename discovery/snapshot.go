package discovery

import (
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Snapshot is what a server served at one read, in the aggregated form
// whichever form it came in. It is never changed after the read that made
// it, and is safe to share.
type Snapshot struct {
	// Groups lists the core group (named "") first, then the named groups
	// in the server's order. Each group's Versions come in the server's
	// order of preference: the first is the preferred version.
	Groups []apidiscoveryv2.APIGroupDiscovery
	// Aggregated is true when both documents came in the aggregated form,
	// false when the server answered with the legacy one.
	Aggregated bool
	// Failed holds, for the legacy form, the group versions whose resource
	// list could not be read (an aggregated API server that is down
	// answers 503), with why. Their resources are unknown, not absent.
	Failed map[schema.GroupVersion]error

	mapper meta.RESTMapper // built from Groups by read
}

// Resources returns the resources the server serves in gv, or nil.
func (s *Snapshot) Resources(gv schema.GroupVersion) []apidiscoveryv2.APIResourceDiscovery {
	for _, g := range s.Groups {
		if g.Name != gv.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == gv.Version {
				return v.Resources
			}
		}
	}
	return nil
}

// buildMapper builds apimachinery's REST mapper over the groups: a
// DefaultRESTMapper that knows every kind with its plural, singular and
// scope as the server named them (never guessed), under a
// PriorityRESTMapper that settles an ambiguous lookup ("events" is both
// core and events.k8s.io) as kubectl does: the preferred version of every
// group in the server's order first, then the other versions.
func buildMapper(groups []apidiscoveryv2.APIGroupDiscovery) meta.RESTMapper {
	var preferred, others []schema.GroupVersion
	for _, g := range groups {
		for i, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			if i == 0 {
				preferred = append(preferred, gv)
			} else {
				others = append(others, gv)
			}
		}
	}
	order := append(preferred, others...)
	m := meta.NewDefaultRESTMapper(order)
	for _, g := range groups {
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			for _, r := range v.Resources {
				addResource(m, gv, r)
			}
		}
	}
	p := meta.PriorityRESTMapper{Delegate: m}
	for _, gv := range order {
		p.ResourcePriority = append(p.ResourcePriority, gv.WithResource(meta.AnyResource))
		p.KindPriority = append(p.KindPriority, gv.WithKind(meta.AnyKind))
	}
	return p
}

// addResource files one resource under its kind. A resource without a
// kind (none that a client lists or watches) is left out.
func addResource(m *meta.DefaultRESTMapper, gv schema.GroupVersion, r apidiscoveryv2.APIResourceDiscovery) {
	if r.ResponseKind == nil || r.ResponseKind.Kind == "" || r.Resource == "" {
		return
	}
	scope := meta.RESTScopeNamespace
	if r.Scope == apidiscoveryv2.ScopeCluster {
		scope = meta.RESTScopeRoot
	}
	singular := r.SingularResource
	if singular == "" {
		singular = strings.ToLower(r.ResponseKind.Kind)
	}
	m.AddSpecific(gv.WithKind(r.ResponseKind.Kind), gv.WithResource(r.Resource), gv.WithResource(singular), scope)
}
