package wire

// A pod's lists given their size before the generated Unmarshal fills
// them: an optimisation of the protobuf parts path (protobuf_parts.go),
// for the lists it leaves to the generated code. Delete this file and its
// hooks (the calls to presizeStatus in protobuf_strings.go,
// presizeManagedFields and presizePart in protobuf_parts.go) and the
// package is still correct, only more wasteful.
//
// Why it pays: the generated Unmarshal appends each element of a repeated
// field to its slice, which grows by doubling: a pod's five conditions
// take slices of 1, 2, 4 and 8 elements, the first three garbage at once
// and the last holding room for three more, which internal/share's walk
// then copies away (exact). The count of a list's elements costs nothing
// for the lists split off a message (splitMessage counts them as it
// splits: the status's and managedFields), and for a part is a scan of
// the keys and lengths of bytes the decoder reads anyway; a slice made
// with that capacity is appended to in place, once. In
// BenchmarkWatchDecodeParts that was about 3 KB and 6 allocations of the
// 7.8 KB and 69 an event.
//
// Why it is bounded: a count is of the fields whose bytes parse, not of
// the elements that decode nor of a map's distinct keys. The generated
// decoder stops at the first element that fails, and keeps one entry per
// key, so a frame of elements that fail inside, or of one label sent again
// and again, costs it next to nothing; a capacity of that count would cost
// up to 140 times the frame's bytes (a Container is 408 bytes, its empty
// field 2). So a capacity is at most presizeMax: far more than a pod's
// lists and maps hold, and a longer one grows past it by append, as the
// generated code grows it.
//
// Why it is correct: append into a slice of length 0 gives the same
// elements whatever its capacity, and nothing compares capacities (the
// differential tests compare with reflect.DeepEqual and apimachinery's
// Semantic equality). A field that is absent leaves its slice nil, as the
// generated code does. Bytes that do not parse are counted no further: the
// generated decoder then decides, as before.

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// presizeStatus gives s, a PodStatus whose lists are still empty, lists of
// the capacity their spans fill: lists, as splitMessage split and counted
// them, are conditions, containerStatuses, initContainerStatuses, podIPs
// and hostIPs (statusSplit's last five).
func presizeStatus(s *corev1.PodStatus, lists []span) {
	s.Conditions = sized[corev1.PodCondition](lists[0].count)
	s.ContainerStatuses = sized[corev1.ContainerStatus](lists[1].count)
	s.InitContainerStatuses = sized[corev1.ContainerStatus](lists[2].count)
	s.PodIPs = sized[corev1.PodIP](lists[3].count)
	s.HostIPs = sized[corev1.HostIP](lists[4].count)
}

// presizeManagedFields gives m, whose managedFields are still empty, a
// managedFields list of the capacity their span fills, as splitMessage
// split and counted it.
func presizeManagedFields(m *metav1.ObjectMeta, managed span) {
	m.ManagedFields = sized[metav1.ManagedFieldsEntry](managed.count)
}

// presizePart gives p's part id, a list, the capacity of raw, its
// occurrences, before raw is decoded into p.
func presizePart(p *corev1.Pod, id partID, raw []byte) {
	n := 0
	for off := 0; off < len(raw); n++ {
		_, size, ok := nextField(raw[off:])
		if !ok {
			return
		}
		off += size
	}
	m, s := &p.ObjectMeta, &p.Spec
	switch id {
	case partOwnerReferences:
		m.OwnerReferences = sized[metav1.OwnerReference](n)
	case partFinalizers:
		m.Finalizers = sized[string](n)
	case partVolumes:
		s.Volumes = sized[corev1.Volume](n)
	case partInitContainers:
		s.InitContainers = sized[corev1.Container](n)
	case partContainers:
		s.Containers = sized[corev1.Container](n)
	case partImagePullSecrets:
		s.ImagePullSecrets = sized[corev1.LocalObjectReference](n)
	case partTolerations:
		s.Tolerations = sized[corev1.Toleration](n)
	case partTopologySpread:
		s.TopologySpreadConstraints = sized[corev1.TopologySpreadConstraint](n)
	}
}

// presizeMax is the largest capacity given from a count ("Why it is
// bounded").
const presizeMax = 256

// sized is an empty slice of capacity n (at most presizeMax), or nil when
// n is 0: what the generated code leaves for an absent field.
func sized[E any](n int) []E {
	if n == 0 {
		return nil
	}
	return make([]E, 0, min(n, presizeMax))
}
