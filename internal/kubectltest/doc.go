// Package kubectltest runs the real kubectl from tests, as a user would
// against a cluster: the tests of cmd/fakeapi drive the fake server with
// it, and those of examples/sample-controller drive the controller. Each
// Kubectl has a kubeconfig, a HOME and a cache directory of its own, so
// that nothing of the machine's kubectl set-up leaks in, and every command
// it runs is logged with its output. Path finds kubectl (or skips the
// test), and Build and Start build and run the command kubectl talks to.
//
// It is imported only by tests, and needs kubectl on the PATH: the tests
// that use it skip without one, and under -short.
package kubectltest
