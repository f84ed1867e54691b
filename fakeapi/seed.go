package fakeapi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seedNodes is how many distinct spec.nodeName values seeded pods spread
// over, so that field selectors on nodes have something to select.
const seedNodes = 100

// SeedPods creates n pods spread round-robin over namespaces ("default"
// when none are given), for benchmarks and large tests. The pods are built
// directly in memory and stored through the same write path as Create, so
// each gets its own resourceVersion and event, but nothing is encoded,
// decoded or sent over HTTP. Watches are woken once, at the end.
//
// Pods are named seed-000000, seed-000001, ... continuing across calls;
// each carries labels app=seed and shard=<i mod 10>, a node name
// node-<i mod 100> and phase Running.
func (s *Server) SeedPods(namespaces []string, n int) error {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceDefault}
	}
	ri, ok := s.reg.byKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if !ok {
		return fmt.Errorf("%w: pods are not in the scheme", ErrNotServed)
	}
	cpu := resource.MustParse("100m")
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.store.rv
	defer func() {
		if s.store.rv != before {
			s.notifyLocked()
		}
	}()
	for i := 0; i < n; i++ {
		idx := s.seeded
		pod := seedPod(idx, namespaces[idx%len(namespaces)], cpu)
		if _, err := s.store.create(ri, pod); err != nil {
			return fmt.Errorf("fakeapi: seeding pod %d: %w", idx, err)
		}
		s.seeded++
	}
	return nil
}

// seedPod builds one realistic, small pod.
func seedPod(idx int, namespace string, cpu resource.Quantity) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("seed-%06d", idx),
			Namespace: namespace,
			Labels:    map[string]string{"app": "seed", "shard": fmt.Sprint(idx % 10)},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", idx%seedNodes),
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu}},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}
