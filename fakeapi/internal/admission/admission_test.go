package admission

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var podKind = schema.GroupKind{Kind: "Pod"}

func newPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}
}

// A pod sent by a client is defaulted and created Pending, with its QoS
// class, priority and the default tolerations.
func TestCreatePod(t *testing.T) {
	pod := newPod()
	Default(pod)
	PrepareForCreate(pod)
	require.Equal(t, corev1.RestartPolicyAlways, pod.Spec.RestartPolicy)
	require.Equal(t, corev1.PullIfNotPresent, pod.Spec.Containers[0].ImagePullPolicy)
	require.Equal(t, corev1.PodPending, pod.Status.Phase)
	require.Equal(t, corev1.PodQOSBestEffort, pod.Status.QOSClass)
	require.Equal(t, int32(0), *pod.Spec.Priority)
	require.Len(t, pod.Spec.Tolerations, 2)
	require.NoError(t, Validate(podKind, pod))
}

func TestValidateNamesTheCauses(t *testing.T) {
	pod := newPod()
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "c"})
	err := Validate(podKind, pod)
	require.True(t, apierrors.IsInvalid(err), "%v", err)
	var causes []metav1.StatusCause
	if status, ok := err.(apierrors.APIStatus); ok {
		causes = status.Status().Details.Causes
	}
	require.Equal(t, []metav1.StatusCause{
		{Type: metav1.CauseType(field.ErrorTypeDuplicate), Message: `Duplicate value: "c"`, Field: "spec.containers[1].name"},
		{Type: metav1.CauseType(field.ErrorTypeRequired), Message: "Required value", Field: "spec.containers[1].image"},
	}, causes)
}

// A pod update may change images but not the rest of the spec; what the
// server assigned at create time survives an update that leaves it out.
func TestAdmitUpdatePod(t *testing.T) {
	stored := newPod()
	Default(stored)
	PrepareForCreate(stored)

	image := newPod()
	image.Spec.Containers[0].Image = "nginx:2"
	require.NoError(t, AdmitUpdate(podKind, image, stored, ""))
	require.Equal(t, int32(0), *image.Spec.Priority, "kept from the stored pod")

	restart := newPod()
	restart.Spec.RestartPolicy = corev1.RestartPolicyNever
	require.True(t, apierrors.IsInvalid(AdmitUpdate(podKind, restart, stored, "")))
}

func TestFieldValidation(t *testing.T) {
	for _, tc := range []struct {
		value, verb, want string
		invalid           bool
	}{
		{"", "create", Warn, false},
		{"Strict", "patch", Strict, false},
		{"Loose", "get", Warn, false},
		{"Loose", "update", "", true},
	} {
		got, err := FieldValidation(tc.value, tc.verb)
		require.Equal(t, tc.invalid, apierrors.IsInvalid(err), "%q %q: %v", tc.value, tc.verb, err)
		require.Equal(t, tc.want, got)
	}
}

// Unknown fields: refused with Strict, one Warning header each with Warn.
func TestCheckFields(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	kind := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"zzz":1,"yyy":2}`)
	unknown := NewStrictDecoders(scheme).UnknownFields(body, runtime.ContentTypeJSON, kind, &corev1.ConfigMap{})
	require.Error(t, unknown)

	require.True(t, apierrors.IsBadRequest(CheckFields(Strict, kind, unknown, nil, nil)))
	require.True(t, apierrors.IsInvalid(CheckFields(Strict, kind, unknown, body, nil)), "a patch is 422")
	warnings := http.Header{}
	require.NoError(t, CheckFields(Warn, kind, unknown, nil, warnings))
	require.Len(t, warnings.Values("Warning"), 2)
	require.NoError(t, CheckFields(Ignore, kind, unknown, nil, warnings))
}
