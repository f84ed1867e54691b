package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/rest"
)

// The two forms of the documents, and how a request picks one. A client
// names the aggregated form in Accept, before plain JSON; a server that has
// it answers with a Content-Type that names it back, and one that does not
// (before 1.26, or with the feature off) answers the legacy document.
const (
	discoveryGroup = "apidiscovery.k8s.io"
	discoveryKind  = "APIGroupDiscoveryList"
	// acceptAggregated asks for v2, then v2beta1 (servers 1.26 to 1.29,
	// whose JSON is the same), then the legacy form.
	acceptAggregated = "application/json;g=" + discoveryGroup + ";v=v2;as=" + discoveryKind +
		",application/json;g=" + discoveryGroup + ";v=v2beta1;as=" + discoveryKind +
		",application/json"
	acceptLegacy = "application/json"
)

// maxGroupVersions bounds how many /apis/{group}/{version} documents one
// legacy read fetches: a hostile /apis cannot make it loop for ever. Real
// clusters have a few dozen.
const maxGroupVersions = 1000

// read fetches every document and builds a Snapshot from them.
func (c *Client) read(ctx context.Context) (*Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	snap := &Snapshot{Failed: map[schema.GroupVersion]error{}}
	core, aggregated, err := c.readRoot(ctx, snap, "api")
	if err != nil {
		return nil, err
	}
	named, aggregatedNamed, err := c.readRoot(ctx, snap, "apis")
	if err != nil {
		return nil, err
	}
	snap.Aggregated = aggregated && aggregatedNamed
	snap.Groups = append(core, named...)
	snap.mapper = buildMapper(snap.Groups)
	return snap, nil
}

// readRoot reads /api (the core group) or /apis (the named groups), in
// whichever form the server answers, and, for the legacy form, the
// resource list of each group version.
func (c *Client) readRoot(ctx context.Context, snap *Snapshot, root string) ([]apidiscoveryv2.APIGroupDiscovery, bool, error) {
	body, aggregated, err := c.get(ctx, acceptAggregated, root)
	if err != nil {
		return nil, false, err
	}
	if aggregated {
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := decodeDocument(body, &list, &list.TypeMeta, discoveryKind); err != nil {
			return nil, false, fmt.Errorf("/%s: %w", root, err)
		}
		return list.Items, true, nil
	}
	gvs, err := legacyGroupVersions(root, body)
	if err != nil {
		return nil, false, err
	}
	return c.readLegacyGroups(ctx, snap, root, gvs), false, nil
}

// legacyGroupVersions lists the group versions a legacy /api (APIVersions)
// or /apis (APIGroupList) document names, each group's preferred version
// first.
func legacyGroupVersions(root string, body []byte) ([]schema.GroupVersion, error) {
	var gvs []schema.GroupVersion
	if root == "api" {
		var versions metav1.APIVersions
		if err := decodeDocument(body, &versions, &versions.TypeMeta, "APIVersions"); err != nil {
			return nil, fmt.Errorf("/api: %w", err)
		}
		for _, v := range versions.Versions {
			gvs = append(gvs, schema.GroupVersion{Version: v})
		}
		return gvs, nil
	}
	var groups metav1.APIGroupList
	if err := decodeDocument(body, &groups, &groups.TypeMeta, "APIGroupList"); err != nil {
		return nil, fmt.Errorf("/apis: %w", err)
	}
	for _, g := range groups.Groups {
		preferred := g.PreferredVersion.Version
		if preferred != "" {
			gvs = append(gvs, schema.GroupVersion{Group: g.Name, Version: preferred})
		}
		for _, v := range g.Versions {
			if v.Version != preferred {
				gvs = append(gvs, schema.GroupVersion{Group: g.Name, Version: v.Version})
			}
		}
	}
	return gvs, nil
}

// readLegacyGroups reads the resource list of each group version and
// gathers them by group, in the order given. A group version whose list
// cannot be read (an aggregated API server that is down answers 503) is
// left out and recorded in snap.Failed: the others are still good.
func (c *Client) readLegacyGroups(ctx context.Context, snap *Snapshot, root string, gvs []schema.GroupVersion) []apidiscoveryv2.APIGroupDiscovery {
	var out []apidiscoveryv2.APIGroupDiscovery
	index := map[string]int{}
	for i, gv := range gvs {
		if i == maxGroupVersions {
			snap.Failed[gv] = fmt.Errorf("%w: more than %d group versions", ErrUnreachable, maxGroupVersions)
			break
		}
		version, err := c.readResourceList(ctx, root, gv)
		if err != nil {
			snap.Failed[gv] = err
			continue
		}
		at, ok := index[gv.Group]
		if !ok {
			at = len(out)
			index[gv.Group] = at
			out = append(out, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: gv.Group}})
		}
		out[at].Versions = append(out[at].Versions, version)
	}
	return out
}

// readResourceList reads /api/{v} or /apis/{g}/{v} and turns it into the
// aggregated form, subresources under their resource.
func (c *Client) readResourceList(ctx context.Context, root string, gv schema.GroupVersion) (apidiscoveryv2.APIVersionDiscovery, error) {
	segs := []string{root, gv.Version}
	if gv.Group != "" {
		segs = []string{root, gv.Group, gv.Version}
	}
	body, _, err := c.get(ctx, acceptLegacy, segs...)
	if err != nil {
		return apidiscoveryv2.APIVersionDiscovery{}, err
	}
	var list metav1.APIResourceList
	if err := decodeDocument(body, &list, &list.TypeMeta, "APIResourceList"); err != nil {
		return apidiscoveryv2.APIVersionDiscovery{}, fmt.Errorf("%s: %w", gv, err)
	}
	return versionFromLegacy(gv.Version, list.APIResources), nil
}

// versionFromLegacy converts a legacy resource list: "pods/status" becomes
// a subresource of "pods".
func versionFromLegacy(version string, resources []metav1.APIResource) apidiscoveryv2.APIVersionDiscovery {
	v := apidiscoveryv2.APIVersionDiscovery{Version: version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	index := map[string]int{}
	for _, r := range resources {
		if strings.Contains(r.Name, "/") {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if r.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		index[r.Name] = len(v.Resources)
		v.Resources = append(v.Resources, apidiscoveryv2.APIResourceDiscovery{
			Resource: r.Name, Scope: scope, SingularResource: r.SingularName, Verbs: r.Verbs,
			ShortNames: r.ShortNames, Categories: r.Categories,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
		})
	}
	for _, r := range resources {
		parent, sub, ok := strings.Cut(r.Name, "/")
		at, known := index[parent]
		if !ok || !known {
			continue
		}
		v.Resources[at].Subresources = append(v.Resources[at].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, Verbs: r.Verbs,
			ResponseKind: &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind},
		})
	}
	return v
}

// decodeDocument decodes a discovery document into doc and checks that it
// is one: a server (or a proxy in front of it) that answers every path
// with the same object would otherwise pass for a server that serves
// nothing. Any failure wraps ErrUnreachable.
func decodeDocument(body []byte, doc any, tm *metav1.TypeMeta, kind string) error {
	if err := json.Unmarshal(body, doc); err != nil {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if tm.Kind != kind {
		return fmt.Errorf("%w: a %q where a %s was expected", ErrUnreachable, tm.Kind, kind)
	}
	return nil
}

// get fetches one document, at most MaxObjectBytes of it, and says whether
// it came in the aggregated form. Any failure wraps ErrUnreachable.
func (c *Client) get(ctx context.Context, accept string, segs ...string) ([]byte, bool, error) {
	u := c.docURL(segs...)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.rc.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, false, fmt.Errorf("%w: GET %s: %w", ErrUnreachable, req.URL.Path, c.rc.Error(resp, "get", schema.GroupResource{}))
	}
	body, err := rest.ReadBody(resp, c.rc.Config().MaxObjectBytes)
	if err != nil {
		return nil, false, fmt.Errorf("%w: GET %s: %w", ErrUnreachable, req.URL.Path, err)
	}
	return body, isAggregated(resp.Header.Get("Content-Type")), nil
}

// isAggregated tells an aggregated document by its Content-Type, which
// names the group and kind it was asked for.
func isAggregated(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json" && params["g"] == discoveryGroup &&
		(params["v"] == "v2" || params["v"] == "v2beta1") && params["as"] == discoveryKind
}

// docURL is the URL of a discovery document under the configured Host
// (whose path, behind a proxy, is kept in front).
func (c *Client) docURL(segs ...string) string {
	u, _ := url.Parse(c.rc.Config().Host) // validated by rest.New
	u.Path = path.Join(append([]string{"/", u.Path}, segs...)...)
	return u.String()
}
