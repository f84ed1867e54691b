package main

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/fakeapi"
)

// clusterNamespaces are the namespaces every real cluster starts with.
var clusterNamespaces = []string{"default", "kube-node-lease", "kube-public", "kube-system"}

// createNamespaces creates the cluster's namespaces and those the seeded
// pods live in (the comma-separated -namespaces list), so that kubectl get
// ns shows them and writes into them are accepted, as on a real cluster.
func createNamespaces(srv *fakeapi.Server, seeded string) error {
	names := append([]string(nil), clusterNamespaces...)
	for _, ns := range strings.Split(seeded, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			names = append(names, ns)
		}
	}
	done := map[string]bool{}
	for _, name := range names {
		if done[name] {
			continue
		}
		done[name] = true
		if _, err := srv.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}
