// Command informer-demo shows the informer stack at work: it starts the
// in-process fake API server with a few thousand pods and a churn generator,
// runs a factory with pod and service informers and a few handlers, shows the
// caches filling, then prints one summary line a second: events per second
// (changes the watches delivered, not the initial list), cache sizes, each
// handler's lag and time per event, and watch restarts.
//
//	go run ./cmd/informer-demo                      # embedded fake API server
//	go run ./cmd/informer-demo -duration 10s        # stop by itself
//	go run ./cmd/informer-demo -kubeconfig ~/.kube/config   # a real cluster, read-only
//	go run ./cmd/informer-demo -kubeconfig a.yaml:b.yaml -context dev   # merged as $KUBECONFIG is
//
// It stops cleanly on Ctrl-C (SIGINT), SIGTERM, or after -duration.
package main
