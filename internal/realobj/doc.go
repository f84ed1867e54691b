// Package realobj builds ConfigMaps, Secrets, Deployments, ReplicaSets and
// Nodes shaped like the ones a real cluster holds, for the memory
// benchmarks: what repeats across them (each namespace's kube-root-ca.crt
// and image pull secret, a service account token's ca.crt, a
// Deployment's template in each of its ReplicaSets, a node pool's labels,
// capacity, taints and images) repeats as it does there, and what is
// unique (names, UIDs, tokens, a Helm release, a node's addresses) is
// unique. internal/realpod does the same for pods, whose templates these
// Deployments and ReplicaSets hold.
//
// Object i of each kind is fixed by i, so that runs are reproducible, and
// Touch(obj, round) is the write a controller or a kubelet makes to it, as
// a churn of every object needs.
package realobj
