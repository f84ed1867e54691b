// Package controller is a small, complete controller built from this
// repository's parts, the pattern every seed ends with: handlers enqueue
// keys, workers do the work; read from the lister, write through the
// client.
//
// It watches Deployments, Services and Pods through one factory and keeps an
// annotation on each Deployment that summarises what it finds (a
// status-like field a dashboard could read):
//
//	example.informer.dev/summary: "pods=3 services=web"
//
// pods counts the Pods of the Deployment's namespace its selector matches;
// services lists the Services whose selector matches the Deployment's pod
// template.
//
//	Deployment / Pod / Service events --EnqueueKeys or mapping--> workqueue.Queue
//	    --> 2 workers: lister reads --> summary --> client.Update (RetryOnConflict)
//
// A Pod or Service event enqueues the Deployments it may concern, found in
// the Deployment lister; a Deployment event enqueues itself. The worker
// computes the summary from the listers alone, and writes only when it
// differs from what the Deployment carries, so its own write, which comes
// back as an update, ends the loop instead of feeding it. A failed write is
// retried through the queue's rate limiter.
//
// With Options.Fleet (cmd/summarize -leader-elect) it runs as one replica
// of several on a Lease: every replica keeps its caches warm and only the
// leader's workers reconcile (fleet.go; docs/fleet.md).
//
// cmd/summarize runs it against a kubeconfig's cluster, or an embedded fake
// API server, and serves /metrics, /healthz and /readyz on -listen;
// docs/controller.md walks through the code.
package controller
