package admission

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Spec validation: the real server's rules for what a pod must have, the
// ones a client meets first (a pod or a pod template without containers, a
// container without a name or an image). They answer 422 Invalid with one
// cause per field, in the real server's words, so that clients that show
// or branch on the causes see the same ones. The rest of the real
// validation (ports, volumes, probes, resources) is not reproduced.

// Validate checks obj's spec for the kinds that have rules here: a 422
// Invalid naming gk, or nil.
func Validate(gk schema.GroupKind, obj runtime.Object) error {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *corev1.Pod:
		errs = validatePodSpec(&o.Spec, field.NewPath("spec"))
	case *appsv1.Deployment:
		errs = validatePodSpec(&o.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
	case *appsv1.ReplicaSet:
		errs = validatePodSpec(&o.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
	case *appsv1.StatefulSet:
		errs = validatePodSpec(&o.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
	case *appsv1.DaemonSet:
		errs = validatePodSpec(&o.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
	}
	if len(errs) == 0 {
		return nil
	}
	name := ""
	if m, err := meta.Accessor(obj); err == nil {
		name = m.GetName()
	}
	return apierrors.NewInvalid(gk, name, errs)
}

func validatePodSpec(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	if len(spec.Containers) == 0 {
		return field.ErrorList{field.Required(path.Child("containers"), "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, c := range spec.InitContainers {
		errs = append(errs, validateContainer(c, path.Child("initContainers").Index(i), names)...)
	}
	for i, c := range spec.Containers {
		errs = append(errs, validateContainer(c, path.Child("containers").Index(i), names)...)
	}
	return errs
}

// validateContainer checks one container's name (a DNS label, unique in
// the pod) and image.
func validateContainer(c corev1.Container, path *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Name == "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case names.Has(c.Name):
		errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
	default:
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), c.Name, msg))
		}
	}
	names.Insert(c.Name)
	if c.Image == "" {
		errs = append(errs, field.Required(path.Child("image"), ""))
	}
	return errs
}

// InvalidReplicas is the cause of a negative replica count, as the real
// server words it.
func InvalidReplicas(n int32) field.ErrorList {
	return field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), n, "must be greater than or equal to 0")}
}

// podUpdatableFields are what an update of a running pod may change, in
// the real server's words.
var podUpdatableFields = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`," +
	"`spec.tolerations` (only additions to existing tolerations)," +
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

// validatePodUpdate is the real rule for updates of a pod (not of its
// status): the spec is immutable but for images, the active deadline and
// added tolerations. Other kinds have no update rule here.
func validatePodUpdate(gk schema.GroupKind, obj, stored runtime.Object, subresource string) error {
	pod, ok := obj.(*corev1.Pod)
	storedPod, wasPod := stored.(*corev1.Pod)
	if !ok || !wasPod || subresource != "" {
		return nil
	}
	// Compared with the stored pod as the decoder would default it: one
	// made through the Go API was stored as given.
	old := storedPod.DeepCopy()
	Default(old)
	munged := pod.Spec.DeepCopy()
	var errs field.ErrorList
	if len(munged.Containers) == len(old.Spec.Containers) {
		for i := range munged.Containers {
			munged.Containers[i].Image = old.Spec.Containers[i].Image
		}
	}
	if len(munged.InitContainers) == len(old.Spec.InitContainers) {
		for i := range munged.InitContainers {
			munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
		}
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	for _, t := range old.Spec.Tolerations {
		if !slices.ContainsFunc(munged.Tolerations, func(n corev1.Toleration) bool { return equality.Semantic.DeepEqual(n, t) }) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "tolerations"), "existing toleration can not be modified except its tolerationSeconds"))
			break
		}
	}
	munged.Tolerations = old.Spec.Tolerations
	if g := old.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 && munged.TerminationGracePeriodSeconds != nil &&
		*munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if !equality.Semantic.DeepEqual(*munged, old.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than "+podUpdatableFields))
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, pod.Name, errs)
}
