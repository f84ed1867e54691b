package patch

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Each patch type applied to one small pod, and the real server's codes
// for the patches it refuses.
func TestDecode(t *testing.T) {
	const pod = `{"metadata":{"name":"p","labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"x","image":"x:1"},{"name":"y","image":"y:1"}]}}`
	for _, tc := range []struct {
		name, mediaType, patch string
		typed                  bool
		want                   string // the patched document, when it applies
		code                   int32  // the refusal, when it does not
	}{
		{name: "merge deletes with null and replaces lists", mediaType: MediaMerge, typed: true,
			patch: `{"metadata":{"labels":{"a":null}},"spec":{"containers":[{"name":"x","image":"x:2"}]}}`,
			want:  `{"metadata":{"name":"p","labels":{"b":"2"}},"spec":{"containers":[{"name":"x","image":"x:2"}]}}`},
		{name: "strategic merges containers by name", mediaType: MediaStrategicMerge, typed: true,
			patch: `{"spec":{"containers":[{"name":"x","image":"x:2"}]}}`,
			want:  `{"metadata":{"name":"p","labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"x","image":"x:2"},{"name":"y","image":"y:1"}]}}`},
		{name: "JSON patch", mediaType: MediaJSONPatch, typed: true,
			patch: `[{"op":"replace","path":"/metadata/labels/a","value":"3"}]`,
			want:  `{"metadata":{"name":"p","labels":{"a":"3","b":"2"}},"spec":{"containers":[{"name":"x","image":"x:1"},{"name":"y","image":"y:1"}]}}`},
		{name: "a failing test op is 422", mediaType: MediaJSONPatch, typed: true,
			patch: `[{"op":"test","path":"/metadata/name","value":"q"}]`, code: http.StatusUnprocessableEntity},
		{name: "strategic merge of a type without a Go type is 415", mediaType: MediaStrategicMerge,
			patch: `{}`, code: http.StatusUnsupportedMediaType},
		{name: "an unknown patch type is 415", mediaType: "application/json", typed: true,
			patch: `{}`, code: http.StatusUnsupportedMediaType},
		{name: "a merge patch that is not an object is 400", mediaType: MediaMerge, typed: true,
			patch: `[1]`, code: http.StatusBadRequest},
		{name: "nesting deeper than MaxDepth is 400", mediaType: MediaMerge, typed: true,
			patch: strings.Repeat(`{"a":`, MaxDepth+1) + `1` + strings.Repeat(`}`, MaxDepth+1), code: http.StatusBadRequest},
		{name: "too many copies is 413", mediaType: MediaJSONPatch, typed: true,
			patch: "[" + strings.Repeat(`{"op":"copy","from":"/metadata","path":"/m"},`, maxJSONPatchCopies) +
				`{"op":"copy","from":"/metadata","path":"/m"}]`, code: http.StatusRequestEntityTooLarge},
		{name: "a result over the limit is 413", mediaType: MediaJSONPatch, typed: true,
			patch: `[{"op":"add","path":"/big","value":"` + strings.Repeat("x", 1000) + `"}]`, code: http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apply, err := Decode(tc.mediaType, []byte(tc.patch), tc.typed, 500)
			var out []byte
			if err == nil {
				out, err = apply([]byte(pod), &corev1.Pod{})
			}
			if tc.code != 0 {
				require.Error(t, err)
				var status apierrors.APIStatus
				require.ErrorAs(t, err, &status)
				require.Equal(t, tc.code, status.Status().Code, err.Error())
				return
			}
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(out))
		})
	}
}

// Brackets inside strings are not nesting.
func TestCheckDepthSkipsStrings(t *testing.T) {
	require.NoError(t, CheckDepth([]byte(`{"a":"`+strings.Repeat("[{", MaxDepth)+`\"}"}`)))
	require.Error(t, CheckDepth([]byte(strings.Repeat("[", MaxDepth+1))))
}
