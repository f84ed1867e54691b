// Package discovery tells what an API server serves: which groups, which
// versions of each (the preferred one first), and, in each, which
// resources, with their kind, plural and scope. It answers the question
// every request has to settle first, "where does this kind live?":
//
//	kind apps/v1 Deployment --discovery--> /apis/apps/v1/namespaces/{ns}/deployments
//
// Client reads the server's discovery documents through the shared
// *rest.Client: the aggregated form (apidiscovery.k8s.io/v2, one document
// for /api and one for /apis, since Kubernetes 1.30) when the server offers
// it, else the legacy form (/api, /apis, then one /apis/{group}/{version}
// per group version). It keeps the result (a Snapshot) and reads it again
// only when asked to (Refresh), at most once per Options.MinRefreshInterval
// and backing off after failures, so that a storm of lookups for a kind
// nobody serves costs the server one request now and then, not one each.
//
// Mapper is apimachinery's meta.RESTMapper over the latest Snapshot (kind
// to resource and back, scope, preferred version), built from
// meta.DefaultRESTMapper and meta.PriorityRESTMapper; a lookup that misses
// refreshes the Snapshot once and tries again, so that a
// CustomResourceDefinition created after the first read is found.
//
// Resolver is the module's one rule for where a kind lives, used by the
// informer factory and by package client alike: an explicit override
// first, then discovery, and apiresource.Guess only when discovery cannot
// be read at all (ErrUnreachable). A kind the server does not serve is an
// error (meta.IsNoMatchError), not a guess.
//
// Every byte is the server's: each document is read through
// rest.ReadBody, bounded by the Client's Config.MaxObjectBytes, and the
// number of group versions read in the legacy form is bounded too
// (maxGroupVersions).
package discovery
