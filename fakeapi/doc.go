// Package fakeapi is an in-process Kubernetes API server for tests and
// benchmarks: the server side of the list/watch protocol that the rest of
// this module (reflector, informers) is the client side of.
//
// # Why it exists
//
// An informer is only as correct as its handling of the server's corner
// cases: a watch resumed from an old resourceVersion answered with 410
// Expired, a list at a future resourceVersion, a stream that ends without
// warning, a bookmark that moves the resourceVersion with no object. A fake
// that never produces them lets a client pass tests it should fail. This
// package behaves like kube-apiserver on the wire, so client-go's informers
// and kubectl work against it unchanged, and it can produce each of those
// cases on demand.
//
// Like net/http/httptest, NewServer starts a real HTTP server on a random
// loopback port; URL, Close and CloseClientConnections do what they do
// there.
//
//	srv, err := fakeapi.NewServer(fakeapi.Options{})
//	...
//	defer srv.Close()
//	pod, err := srv.Create(&corev1.Pod{...})   // the Go API: no HTTP
//	resp, err := http.Get(srv.URL() + "/api/v1/namespaces/default/pods")
//
// # The model: one counter, one log
//
// Behind the HTTP layer sits a store that plays etcd's part. It is a
// deterministic state machine (no goroutines, no randomness, and time only
// through Options.Now):
//
//   - One global resourceVersion counts every write to any resource and is
//     stamped on the written object, so RVs order all writes.
//   - An event log keeps the last Options.CompactionWindow writes. A watch
//     resumes from any RV still in the log; older RVs get 410 Expired, as
//     after an etcd compaction. Compact forgets everything at once.
//   - Paged lists and exact-RV lists read the past by undoing, on the fly,
//     the logged events newer than the requested RV.
//   - A record of every write and of every event sent on a watch lets
//     checkers compare what clients saw with what happened (Writes,
//     SentEvents).
//
// The HTTP layer is thin: it parses the request, takes the server's mutex
// for one store call, and encodes the answer with apimachinery's
// serializers outside the lock. Stored objects are immutable, so encoders
// share them without copying.
//
// # The wire
//
// Routes follow the real layout: /api/v1/namespaces/{ns}/pods,
// /api/v1/pods, /api/v1/nodes, /apis/apps/v1/namespaces/{ns}/deployments,
// with {name}, {name}/status and, for Deployments, ReplicaSets and
// StatefulSets, {name}/scale below. Every group kube-apiserver serves by
// default is served (DefaultResources). Verbs: get, list, watch, create,
// update (PUT), delete, deletecollection, and patch of every type the real
// server takes: JSON merge patch, strategic merge patch, JSON patch
// (fakeapi/internal/patch), and server-side apply with managedFields and conflicts
// (fakeapi/internal/apply). Errors are metav1.Status objects with the real codes,
// reasons and causes (404 NotFound, 409 AlreadyExists, 409 Conflict, 422
// Invalid, 400 BadRequest, 410 Expired, 504 with the ResourceVersionTooLarge
// cause, 413, 415, 401, 405, 406); a path outside every API group gets the
// real router's plain-text 404.
//
// Lists honour resourceVersion, resourceVersionMatch, limit and continue.
// Watches honour resourceVersion, allowWatchBookmarks, timeoutSeconds,
// sendInitialEvents (the WatchList protocol of KEP-3157, ending the
// initial events with a bookmark annotated k8s.io/initial-events-end) and
// label and field selectors (metadata.name, metadata.namespace, and for
// pods spec.nodeName, status.phase and more). An object that starts or
// stops matching a watch's selectors arrives as ADDED or DELETED.
//
// Responses are JSON, YAML or protobuf (application/vnd.kubernetes.protobuf,
// with the length-prefixed watch framing), chosen by the Accept header;
// metadata-only for "as=PartialObjectMetadata;g=meta.k8s.io;v=v1" (or
// ...List); and a Table with the real server's columns for
// "as=Table;g=meta.k8s.io;v=v1", which is what kubectl get prints
// (fakeapi/internal/table).
// Discovery (/api, /apis, group versions) is served in both the aggregated
// form (apidiscovery.k8s.io/v2, which kubectl and client-go ask for first)
// and the legacy one; /version, and /openapi/v2 and /openapi/v3 with the
// real server's own documents, recorded from kube-apiserver by
// scripts/record-openapi.sh (fakeapi/internal/openapi), serve kubectl explain and
// kubectl's validation.
//
// # One object, two versions; questions with no store
//
// As on the real server, events.k8s.io/v1 Events are the core/v1 Events,
// and autoscaling/v1 HorizontalPodAutoscalers the autoscaling/v2 ones,
// seen in another version (views.go, fakeapi/internal/convert): one
// stored object, one resourceVersion, one watch stream, converted on the
// way in and out, so an Event a recorder writes through events.k8s.io/v1
// is listed by kubectl get events. The HPA fields v1 cannot express travel
// in the real server's autoscaling.alpha.kubernetes.io annotations.
//
// The reviews of authorization.k8s.io/v1 (SelfSubjectAccessReview,
// SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectRulesReview)
// and authentication.k8s.io/v1 (TokenReview, SelfSubjectReview) answer a
// POST and store nothing (reviews.go). The server has no authorization:
// every access review is allowed, and says so in its reason. It knows one
// user, AdminUser, whom SelfSubjectReview names (kubectl auth whoami) and
// a TokenReview of Options.Token authenticates.
//
// # What an HTTP write goes through
//
// As on the real server (admission.go, fakeapi/internal/admission): defaults (a pod's restartPolicy, a
// Deployment's strategy, a Service's cluster IP), the namespace check (404
// for a write into a namespace that does not exist; default, kube-system,
// kube-public and kube-node-lease are created on first use), the create
// rules (a new pod is Pending with its QoS class and default tolerations),
// validation of the pod specs that clients meet first (422 with the real
// causes; a pod update may change only images, the active deadline and
// add tolerations), unknown fields refused, warned about or ignored as the
// request's fieldValidation asks, finalizers that hold a deletion
// (finalizers.go), and managedFields. A pod deleted over HTTP first gets its
// deletionTimestamp, as on a real server, and is then removed at once, as
// if its kubelet had confirmed (poddelete.go); a namespace deleted over HTTP
// takes its objects with it, as if the namespace controller had run.
//
// Writes through the Go API (Server.Create, Update, Delete) skip all of it:
// they come from no client, and tests may store the smallest objects that
// make their point (a pod without containers, already Running, in a
// namespace nobody created).
//
// # Custom resources
//
// Creating a CustomResourceDefinition (over HTTP, as kubectl apply does, or
// with Server.Create of an *unstructured.Unstructured) serves its custom
// resource at once, stored as unstructured objects, with its status
// subresource and additionalPrinterColumns, and publishes its schema in
// /openapi/v3 for kubectl explain (customresources.go, fakeapi/internal/crd).
// cmd/fakeapi -crd FILE does it at start.
//
// # Your own types
//
// Add the type to a scheme that starts from apiresource.NewScheme (the
// module's one default scheme, which the informer and its client use too)
// and describe its resource. A ServedResource embeds apiresource.Resource,
// where the kind lives (namespaced unless ClusterScoped), and adds what the
// server offers on it:
//
//	scheme := apiresource.NewScheme()
//	_ = widgetv1.AddToScheme(scheme)
//	srv, err := fakeapi.NewServer(fakeapi.Options{
//		Scheme: scheme,
//		Resources: []fakeapi.ServedResource{{
//			Resource: apiresource.Resource{Kind: widgetv1.SchemeGroupVersion.WithKind("Widget")},
//		}},
//	})
//
// # Fault injection over HTTP
//
// Every fault of the Faults type, and three server actions, are reachable by
// out-of-process clients. All but the resourceVersion query are POST
// requests under /fakeapi/v1/ with an optional JSON body; they answer a
// Success Status, 400 for a body with unknown fields, 405 for the wrong
// method and 404 for an unknown action, and need the bearer token when
// Options.Token is set.
//
//	POST /fakeapi/v1/drop-watches        end every open watch cleanly
//	POST /fakeapi/v1/compact             forget history up to the current RV
//	POST /fakeapi/v1/close-connections   cut every client connection
//	POST /fakeapi/v1/faults/fail         {"verb":"list","resource":"pods","count":2,"code":429,"retryAfterSeconds":1,"message":"..."}
//	                                     fail the next count matching requests
//	POST /fakeapi/v1/faults/latency      {"verb":"get","resource":"pods","milliseconds":200}
//	                                     delay matching requests (0 removes)
//	POST /fakeapi/v1/faults/stall        {"resource":"pods","milliseconds":5000}
//	                                     hold watch streams silent (0: until resume)
//	POST /fakeapi/v1/faults/hold         {"resource":"pods"}
//	                                     watch streams encode but send nothing until resume, then all at once
//	POST /fakeapi/v1/faults/resume       {"resource":"pods"}   end a stall or a hold
//	POST /fakeapi/v1/faults/cut-frame    {"resource":"pods"}   next frame half-written, then connection aborted
//	POST /fakeapi/v1/faults/malformed-frame {"resource":"pods"} next frame replaced by undecodable bytes
//	POST /fakeapi/v1/faults/reset        remove every fault
//	GET  /fakeapi/v1/resourceversion     the current RV in the Status message
//
// An empty verb or resource matches any.
//
// # Security
//
// The server listens on 127.0.0.1 unless Options.Addr says otherwise. With
// Options.Token set, every request needs "Authorization: Bearer <token>"
// (401 otherwise). Bodies over Options.MaxBodyBytes get 413, at once when
// their Content-Length announces it; a body that does not arrive within
// Options.BodyTimeout fails the request and closes its connection. Malformed
// input gets a 400 Status; a handler panic becomes a 500 Status, never a
// crashed process.
//
// # What it does not do
//
// It is a protocol fake, not a cluster: there are no controllers (no
// scheduler, no kubelet, no Deployment controller: a Deployment never gets
// its ReplicaSet), no admission webhooks, no RBAC (one optional bearer
// token), and no API aggregation. A read at a future resourceVersion is
// answered at once, where a real server first waits up to three seconds
// for its cache to catch up. Custom resources are not validated, pruned or
// defaulted against their CRD's schema (it is published, not enforced),
// and are served in their storage version only.
//
// managedFields of HTTP writes are recorded with the real server's
// machinery (structured-merge-diff), writes to /scale included, which are
// tracked on the Scale and translated to the workload as the real server
// does (fieldmanager.go, scale.go, fakeapi/internal/apply). Writes through the Go
// API record nothing.
//
// docs/fakeapi.md has the conformance table that compares this server with
// a real kube-apiserver, request by request.
//
// # A map of the package
//
// The core, which is all an informer needs, reads in an hour, in this
// order:
//
//	server.go        Options, Server, the Go API; every write goes through write
//	store.go         the objects, the resourceVersion counter, the single write path (commit)
//	eventlog.go      the event log a watch resumes from, and compaction
//	snapshot.go      reading the past: lists at an exact or older resourceVersion
//	history.go       the record of writes and of sent events (Writes, SentEvents)
//	list.go          GET on a collection: resourceVersion, limit, continue (continue.go)
//	watch.go         a watch: from where, with what, until when (watchstream.go writes it)
//	faults.go        the faults a test can inject, and where each one bites
//	admin.go         the same faults and actions over HTTP, under /fakeapi/v1/
//	routes.go        URL and method to resource and verb
//
// Then what serves requests: crud.go (get, create, update, delete),
// patchverb.go, encoding.go (content negotiation, JSON, YAML, protobuf,
// partial metadata), errors.go, discovery.go and discovery_aggregated.go,
// resources.go (the registry of served resources), selectors.go,
// resourceversion.go, watchframes.go (frames shared by watches),
// watchhold.go, connections.go and auth.go, seed.go (SeedPods). And the real server's
// behaviours that need the store: admission.go (the order of the write
// rules; namespaces must exist), defaults.go (generation, a namespace's
// label), finalizers.go, poddelete.go, gc.go (ownerReferences), scale.go,
// fieldmanager.go (managedFields on every write), customresources.go and
// unstructured.go; views.go (second versions of stored resources) and
// reviews.go (the create-only reviews).
//
// What makes the server look like kube-apiserver to kubectl, rather than
// only to an informer, lives in packages of its own, each with a doc.go
// saying what it imitates. They know nothing of the server and depend only
// on apimachinery: the core calls them. They are internal: libraries of
// this server, not API of the module.
//
//	fakeapi/internal/table       the Tables kubectl get prints, with the real columns
//	fakeapi/internal/openapi     the recorded OpenAPI documents kubectl explain and apply read
//	fakeapi/internal/patch       JSON merge, strategic merge and JSON patches
//	fakeapi/internal/apply       managedFields and server-side apply, with the real machinery
//	fakeapi/internal/admission   defaults, create and update rules, validation, fieldValidation
//	fakeapi/internal/crd         CustomResourceDefinitions: read, validate, establish, publish
//	fakeapi/internal/convert     the conversions of the views, and the rules of their writes
//
// # Goroutines
//
// The server starts one goroutine (the http.Server's accept loop); net/http
// starts one per connection. Close ends every watch, closes every
// connection and waits for all request handlers to return.
package fakeapi
