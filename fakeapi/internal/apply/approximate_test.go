package apply

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestFieldManagerName(t *testing.T) {
	for ua, want := range map[string]string{
		"Go-http-client/2.0":              "Go-http-client",
		"kubectl/v1.37.2 (linux/amd64)":   "kubectl",
		"no-slash":                        "no-slash",
		"tab\there/1":                     "tabhere",
		string(make([]byte, 200)) + "x/1": "x",
		strings.Repeat("a", 200) + "/1":   strings.Repeat("a", maxFieldManagerLength),
		"":                                "",
	} {
		r, err := http.NewRequest(http.MethodPost, "http://x/api/v1/pods", nil)
		require.NoError(t, err)
		r.Header.Set("User-Agent", ua)
		require.Equal(t, want, ManagerName(r), "User-Agent %q", ua)
	}
	r, err := http.NewRequest(http.MethodPost, "http://x/api/v1/pods?fieldManager=mine", nil)
	require.NoError(t, err)
	require.Equal(t, "mine", ManagerName(r))
}

// Where the real machinery cannot be used, the approximation keeps its
// rule: a write takes the fields it changes from every other manager, and
// a manager left owning nothing loses its entry.
func TestApproximateManagedFieldsTakeChangedFields(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write := func(manager string, live *corev1.ConfigMap, data map[string]string, labels map[string]string) *corev1.ConfigMap {
		t.Helper()
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: labels}, Data: data}
		var liveObj runtime.Object
		if live != nil {
			liveObj = live
		}
		require.NoError(t, Record(obj, liveObj, Writer{Manager: manager, APIVersion: "v1"}, now))
		return obj
	}
	owners := func(cm *corev1.ConfigMap) map[string]string {
		out := map[string]string{}
		for _, e := range cm.ManagedFields {
			out[e.Manager] = string(e.FieldsV1.Raw)
		}
		return out
	}
	a := write("a", nil, map[string]string{"x": "1", "y": "1"}, map[string]string{"l": "1"})
	b := write("b", a, map[string]string{"x": "2", "y": "1"}, map[string]string{"l": "1"})
	require.JSONEq(t, `{"f:data":{"f:y":{}},"f:metadata":{"f:labels":{".":{},"f:l":{}}}}`, owners(b)["a"])
	require.JSONEq(t, `{"f:data":{"f:x":{}}}`, owners(b)["b"])
	c := write("c", b, map[string]string{"x": "2", "y": "3"}, map[string]string{"l": "2"})
	require.JSONEq(t, `{"f:metadata":{"f:labels":{".":{}}}}`, owners(c)["a"])
	c2 := write("c", c, map[string]string{"x": "4", "y": "3"}, map[string]string{"l": "2"})
	require.NotContains(t, owners(c2), "b", "b owned only data.x")
}
