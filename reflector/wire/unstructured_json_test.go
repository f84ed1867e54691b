package wire

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// objectCorpus holds objects the one-pass decoder must decode exactly as
// apimachinery's unstructured JSON scheme does: every JSON type, integers
// at and past int64's edges, escapes, invalid UTF-8, repeated keys.
var objectCorpus = []string{
	`{"kind":"Gizmo","apiVersion":"x/v1","metadata":{"name":"a","generation":3,"labels":{"app":"web"}}}`,
	`{"kind":"K","n":[0,-0,1,-1,9223372036854775807,-9223372036854775808,9223372036854775808,1.5,1e3,1E-2,-0.0,12345678901234567890]}`,
	`{"kind":"K","s":"tab\there \"q\" \\ \/ \u00e9 \ud83d\ude00 \u0000","b":true,"f":false,"z":null}`,
	"{\"kind\":\"K\",\"bad\":\"\xff\xfe\",\"ok\":\"caf\xc3\xa9\"}",
	`{"kind":"K","a":1,"a":2,"e":{},"l":[],"nested":[[[{"x":[{}]}]]]}`,
	"  {\"kind\" : \"K\" ,\n\t\"x\" : [ 1 , 2 ] }  ",
	`{"kind":"K","` + strings.Repeat("k", 40) + `":"` + strings.Repeat("v", 40) + `"}`,
}

// invalidCorpus holds bodies both decoders refuse.
var invalidCorpus = []string{
	``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":-}`,
	`{"a":tru}`, `{"a":"x}`, "{\"a\":\"\x01\"}", `{"a":1} {}`, `{"a":[1,]}`, `{"a":1e400}`, `{"a":"\x"}`,
}

func TestUnstructuredJSONMatchesApimachinery(t *testing.T) {
	for _, in := range objectCorpus {
		var want unstructured.Unstructured
		require.NoError(t, want.UnmarshalJSON([]byte(in)), in)
		var got unstructured.Unstructured
		require.NoError(t, decodeUnstructuredJSON([]byte(in), &got, &stringTable{}, &valueTable{}), in)
		assert.Equal(t, want.Object, got.Object, in)
	}
	for _, in := range invalidCorpus {
		var u unstructured.Unstructured
		assert.ErrorIs(t, decodeUnstructuredJSON([]byte(in), &u, &stringTable{}, &valueTable{}), errJSONSyntax, "%q", in)
	}
}

func TestUnstructuredJSONIntegersStayInt64(t *testing.T) {
	var u unstructured.Unstructured
	require.NoError(t, decodeUnstructuredJSON([]byte(`{"spec":{"replicas":3,"ratio":0.5,"big":1e2}}`), &u, nil, nil))
	spec := u.Object["spec"].(map[string]any)
	assert.Equal(t, int64(3), spec["replicas"])
	assert.Equal(t, 0.5, spec["ratio"])
	assert.Equal(t, float64(100), spec["big"])
}

// A list is decoded as apimachinery decodes it: items without a kind get
// the list's, "items" leaves the list's own fields.
func TestUnstructuredListJSONMatchesApimachinery(t *testing.T) {
	in := `{"apiVersion":"x/v1","kind":"GizmoList","metadata":{"resourceVersion":"7"},"items":[` +
		`{"metadata":{"name":"a"},"spec":{"n":1}},{"apiVersion":"x/v1","kind":"Gizmo","metadata":{"name":"b"}}]}`
	var want unstructured.UnstructuredList
	require.NoError(t, want.UnmarshalJSON([]byte(in)))
	var got unstructured.UnstructuredList
	apiVersion, kind, err := decodeUnstructuredListJSON([]byte(in), &got, &stringTable{}, &valueTable{})
	require.NoError(t, err)
	assert.Equal(t, "x/v1", apiVersion)
	assert.Equal(t, "GizmoList", kind)
	assert.Equal(t, want.Object, got.Object)
	assert.Equal(t, want.Items, got.Items)

	for _, bad := range []string{`{"kind":"L","items":{}}`, `{"kind":"L","items":[1]}`} {
		_, _, err := decodeUnstructuredListJSON([]byte(bad), &got, nil, nil)
		assert.Error(t, err, bad)
	}
}

// Keys and short values of different objects decoded through one table
// are one string in memory; long values are not kept.
func TestStringTableSharesAndIsBounded(t *testing.T) {
	var tab stringTable
	var a, b unstructured.Unstructured
	require.NoError(t, decodeUnstructuredJSON([]byte(`{"metadata":{"namespace":"shop"}}`), &a, &tab, nil))
	require.NoError(t, decodeUnstructuredJSON([]byte(`{"metadata":{"namespace":"shop"}}`), &b, &tab, nil))
	assert.Same(t, unsafe.StringData(a.GetNamespace()), unsafe.StringData(b.GetNamespace()))
	for i := range 3 * stringTableEntries {
		tab.get([]byte(strings.Repeat("x", i%20) + strconv.Itoa(i)))
	}
	assert.LessOrEqual(t, len(tab.m), stringTableEntries)
	long := strings.Repeat("l", stringTableMaxLen+1)
	tab.get([]byte(long))
	_, kept := tab.m[long]
	assert.False(t, kept)
}

// Nesting is bounded: a hostile body cannot make the decoder recurse
// without end.
func TestUnstructuredJSONDepthIsBounded(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1) + `}`
	var u unstructured.Unstructured
	assert.ErrorIs(t, decodeUnstructuredJSON([]byte(deep), &u, nil, nil), errJSONSyntax)
}

// FuzzUnstructuredJSON: on any input, the one-pass decoder and
// apimachinery's agree on success, and then on the value.
func FuzzUnstructuredJSON(f *testing.F) {
	for _, s := range objectCorpus {
		f.Add([]byte(s))
	}
	for _, s := range invalidCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want, got unstructured.Unstructured
		wantErr := want.UnmarshalJSON(in)
		gotErr := decodeUnstructuredJSON(in, &got, &stringTable{}, &valueTable{})
		if wantErr != nil {
			// apimachinery also refuses an object without a kind, which
			// the decoder leaves to the kind checks after it.
			if gotErr == nil && got.GetKind() != "" {
				t.Fatalf("%q: apimachinery refuses (%v), we accept", in, wantErr)
			}
			return
		}
		if gotErr != nil {
			t.Fatalf("%q: apimachinery accepts, we refuse: %v", in, gotErr)
		}
		assert.Equal(t, want.Object, got.Object)
	})
}

// With a value table, equal small objects and arrays of different
// objects are one map or slice, from the third on (the first is only
// noted); the objects themselves never are; without one, nothing is.
func TestValueTableSharesEqualParts(t *testing.T) {
	obj := `{"kind":"K","metadata":{"name":"%d"},"spec":{"ports":[{"port":80}],"empty":{}}}`
	decode := func(values *valueTable) []unstructured.Unstructured {
		out := make([]unstructured.Unstructured, 4)
		for i := range out {
			require.NoError(t, decodeUnstructuredJSON([]byte(fmt.Sprintf(obj, i)), &out[i], nil, values))
		}
		return out
	}
	ptr := func(u unstructured.Unstructured, path ...string) uintptr {
		v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		return reflect.ValueOf(v).Pointer()
	}
	shared := decode(&valueTable{})
	for _, path := range [][]string{{"spec"}, {"spec", "ports"}, {"spec", "empty"}} {
		assert.Equal(t, ptr(shared[2], path...), ptr(shared[3], path...), "%v", path)
		assert.NotEqual(t, ptr(shared[0], path...), ptr(shared[3], path...), "%v: the first is only noted", path)
	}
	assert.NotEqual(t, ptr(shared[2], "metadata"), ptr(shared[3], "metadata"), "unequal parts stay apart")
	assert.NotEqual(t, reflect.ValueOf(shared[2].Object).Pointer(), reflect.ValueOf(shared[3].Object).Pointer())
	own := decode(nil)
	assert.NotEqual(t, ptr(own[2], "spec", "ports"), ptr(own[3], "spec", "ports"))
	assert.Equal(t, own[3].Object, shared[3].Object)
}
