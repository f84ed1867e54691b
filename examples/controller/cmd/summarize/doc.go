// Command summarize runs the example controller of examples/controller: it
// keeps an example.informer.dev/summary annotation on every Deployment,
// counting its Pods and naming its Services.
//
//	go run ./examples/controller/cmd/summarize -kubeconfig ~/.kube/config   # a real cluster (it writes annotations)
//	go run ./examples/controller/cmd/summarize -fake -duration 5s           # an embedded fake API server
//
// With -fake it seeds a Deployment, three Pods and a Service, and prints
// what the controller writes. It stops on Ctrl-C or after -duration.
package main
