// Package admission holds what kube-apiserver does to an object a client
// sends, between decoding it and storing it, for the rules that need
// nothing but the object: defaults, create and update rules, validation,
// and field validation.
//
// # What it imitates
//
//   - Defaulting (Default, defaults.go): what the real decoder fills in on
//     every write: a pod's restartPolicy and dnsPolicy, a container's
//     imagePullPolicy and terminationMessagePath, a Deployment's strategy
//     and revisionHistoryLimit, a Service's sessionAffinity and target
//     ports. Clients read them back and kubectl apply's three-way merge
//     expects them.
//   - Create rules and default admission plugins (PrepareForCreate): a new
//     pod is Pending with its QoS class, priority 0 and the
//     DefaultTolerationSeconds tolerations.
//   - Update rules (AdmitUpdate, update.go): what the server assigned at
//     create time survives an update that leaves it out (a Service's
//     cluster IP and node ports, a pod's priority), and a pod's spec may
//     change only in its images, active deadline and added tolerations.
//   - Validation (Validate, validation.go): the pod spec rules a client
//     meets first, answered with 422 Invalid and the real server's causes.
//   - Field validation (FieldValidation, CheckFields,
//     fieldvalidation.go): unknown and duplicate fields refused, warned
//     about or ignored, as the request's fieldValidation parameter asks.
//
// The real server does much more (the rest of validation, webhooks,
// quotas); what is here is what tests and kubectl meet first, each rule
// found by the conformance test in integration/ (docs/fakeapi.md).
//
// # Its place
//
// It is one of fakeapi's fidelity packages. The fakeapi core
// (admission.go) runs these rules, in the real server's order, on every
// HTTP write, together with the rules that need its store (the namespace
// must exist; a Service's cluster IP is allocated). Writes through the Go
// API skip them. This package knows nothing of the server.
package admission
