// Command sample-controller is kubernetes/sample-controller's behaviour
// built on this module's controller chassis: a Foo custom resource
// (samplecontroller.k8s.io/v1alpha1, testdata/crd.yaml) asks for a
// Deployment of spec.deploymentName with spec.replicas, and the controller
// makes it exist, owned by the Foo, and copies its available replicas
// into the Foo's status.
//
//	Foo events --EnqueueKeys--------\
//	                                 +--> workqueue --> reconcile.Loop --> sync
//	Deployment events --EnqueueOwner/
//
// sync reads the Foo and its Deployment from the listers; it creates or
// corrects the Deployment with a server-side apply (field manager
// "sample-controller") carrying a controller ownerReference, refuses with
// an "ErrResourceExists" warning event when a Deployment of that name is
// someone else's, applies the Foo's status, and records a "Synced" event.
// A deleted Foo's Deployment is the garbage collector's (fakeapi plays it:
// docs/fakeapi.md).
//
// Usage:
//
//	sample-controller -kubeconfig ~/.kube/config -workers 2 -health-addr 127.0.0.1:8081 \
//	    -leader-elect-identity "$POD_NAME" -leader-elect-namespace "$POD_NAMESPACE"
//
// The first line of stdout is the URL of /metrics, /healthz and /readyz
// (ready once the caches have synced). With -leader-elect-identity every
// replica syncs its caches and only the holder of the Lease
// sample-controller reconciles (a warm standby: docs/fleet.md). main_test.go drives it with the real kubectl
// against cmd/fakeapi; types.go, deepcopy.go and register.go hold the Foo
// type, which TestCodeLines leaves out of its count of the controller's
// lines.
package main
