// Command fakeapi runs the in-process Kubernetes API server of package
// fakeapi as a standalone process, for kubectl, client-go programs and
// scripts:
//
//	go run ./cmd/fakeapi -listen 127.0.0.1:8080 -pods 1000
//	kubectl --server http://127.0.0.1:8080 get pods -A
//
// With a token, let it write a kubeconfig: it then serves HTTPS with a
// certificate from a CA it generates at start, and the kubeconfig holds the
// server, that CA and the token, so kubectl (which sends a token only over
// TLS) and kubeconfig.LoadingRules use it as is:
//
//	go run ./cmd/fakeapi -pods 1000 -token s3cret -kubeconfig-out /tmp/fake.kubeconfig
//	kubectl --kubeconfig /tmp/fake.kubeconfig get pods -A
//
// Once it is serving, it prints its URL (http://127.0.0.1:8080) as the first
// line on stdout, so a script can start it and read where it is; the
// kubeconfig is complete before that line. Logs go to stderr. SIGINT or
// SIGTERM stops it cleanly: open watches end, connections close, and it
// exits with status 0.
//
// It starts with the namespaces of a real cluster (default, kube-system,
// kube-public, kube-node-lease) and those of -namespaces. -crd FILE
// (repeatable) serves the CustomResourceDefinitions of a YAML or JSON file
// from the start; CRDs applied with kubectl are served too:
//
//	go run ./cmd/fakeapi -crd widgets.yaml
//	kubectl --server http://127.0.0.1:PORT get widgets
package main
