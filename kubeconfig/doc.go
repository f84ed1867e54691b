// Package kubeconfig finds the rest.Config to reach a cluster, as kubectl
// does: LoadingRules take an explicit file, else the $KUBECONFIG list
// merged, else ~/.kube/config, else the pod's service account (InCluster).
// Loaded carries the Config and the context's namespace. LoadKubeconfig
// reads one file's current context.
//
//	kubeconfig files / service account ──LoadingRules.Load──▶ rest.Config ──rest.New──▶ rest.Client
//
// A kubeconfig is input like any other: every file it names is read only
// when it is a regular file of bounded size (rest.FileError), and relative
// paths are resolved against the file that names them. kubeconfig.go lists
// what is refused with ErrUnsupported (auth providers, basic auth,
// impersonation, interactive plugins); docs/clusters.md compares every
// field with kubectl.
package kubeconfig
