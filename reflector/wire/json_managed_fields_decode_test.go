package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/internal/realpod"
)

// checkReadManagedFields requires that readManagedFields either refuses
// raw or reads it as encoding/json decodes it, and returns whether it read it.
func checkReadManagedFields(t testing.TB, raw []byte) bool {
	t.Helper()
	got, ok := readManagedFields(raw)
	if !ok {
		return false
	}
	var want []metav1.ManagedFieldsEntry
	require.NoError(t, json.Unmarshal(raw, &want), "read by hand, refused by encoding/json: %s", raw)
	require.True(t, reflect.DeepEqual(want, got), "read differently from encoding/json:\n%s\n%#v\n%#v", raw, want, got)
	return true
}

// The hand reader takes the managedFields an API server writes, and only
// values it reads as encoding/json does; the rest it leaves to
// encoding/json (read false), whatever encoding/json makes of them.
func TestReadManagedFieldsAsEncodingJSON(t *testing.T) {
	real := string(marshalJSON(t, realpod.New(7).ManagedFields))
	entry := `{"manager":"m","operation":"Update","apiVersion":"v1","time":"2024-01-02T03:04:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:a":{}},"subresource":"status"}`
	cases := []struct {
		name, raw string
		read      bool
	}{
		{"realpod", real, true},
		{"one entry", `[` + entry + `]`, true},
		{"whitespace", "[ \n{ \"manager\" : \"m\" ,\t\"fieldsV1\" : { \"f:a\" : { } } } , {}\r] ", true},
		{"space before", ` []`, false}, // a member's value, as cut, begins at its first byte
		{"empty array", `[]`, true},
		{"empty entry", `[{}]`, true},
		{"time with offset", `[{"time":"2024-01-02T03:04:05+02:00"}]`, true},
		{"five entries", `[` + entry + `,` + entry + `,` + entry + `,` + entry + `,` + entry + `]`, true},
		{"empty strings", `[{"manager":"","subresource":""}]`, true},
		{"fieldsV1 escapes", `[{"fieldsV1":{"k:{\"a\":\"\\/\"}":{ },"f:\t":{"f:x":{}}}}]`, true},
		{"fieldsV1 other values", `[{"fieldsV1":{"f:a":[1,-2.5e3,true,null,"\u00e9"],"f:b":"é"}}]`, true},
		{"null", `null`, false},
		{"null entry", `[null]`, false},
		{"null time", `[{"time":null}]`, false},
		{"null fieldsV1", `[{"fieldsV1":null}]`, false},
		{"string fieldsV1", `[{"fieldsV1":"x"}]`, false},
		{"escaped string", `[{"manager":"a\"b"}]`, false},
		{"escaped key", `[{"m\u0061nager":"m"}]`, false},
		{"other case key", `[{"Manager":"m"}]`, false},
		{"unknown key", `[{"manager":"m","future":1}]`, false},
		{"repeated key", `[{"manager":"a","manager":"b"}]`, false},
		{"non-ASCII", `[{"manager":"é"}]`, false},
		{"number", `[{"manager":5}]`, false},
		{"bad time", `[{"time":"yesterday"}]`, false},
		{"invalid fieldsV1", `[{"fieldsV1":{"a":}}]`, false},
		{"unbalanced fieldsV1", `[{"fieldsV1":{"a":[}}]`, false},
		{"trailing comma", `[{"manager":"m"},]`, false},
		{"trailing garbage", `[{"manager":"m"}] x`, false},
		{"not an array", `{"manager":"m"}`, false},
		{"unterminated", `[{"manager":"m"`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.read, checkReadManagedFields(t, []byte(c.raw)))
		})
	}
}

// FuzzReadManagedFields: whatever the bytes, what the hand reader takes it
// reads as encoding/json does.
func FuzzReadManagedFields(f *testing.F) {
	f.Add(marshalJSON(f, realpod.New(1).ManagedFields))
	f.Add([]byte(`[{"manager":"m","time":"2024-01-02T03:04:05Z","fieldsV1":{"f:a":{"\"":[1,2.5e3,true,null]}}}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkReadManagedFields(t, raw)
	})
}

// objectsOfObjectsEnd takes only valid JSON objects, and ends them where
// jsonValueEnd does.
func FuzzObjectsOfObjects(f *testing.F) {
	f.Add([]byte(`{"f:metadata":{"k:{\"uid\":\"x\"}":{}, "f:a" : { }}}`))
	f.Add([]byte(`{"a":{"b":{"c":{}}},"d":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return
		}
		end, ok := objectsOfObjectsEnd(raw, 0)
		if !ok {
			return
		}
		require.True(t, json.Valid(raw[:end]), "%q", raw)
		want, ok := jsonValueEnd(raw, 0)
		require.True(t, ok)
		require.Equal(t, want, end, "%q", raw)
	})
}

// The quick check takes a realpod pod's fieldsV1 documents, and refuses
// what is not an object of objects with plain keys (json.Valid decides
// those).
func TestObjectsOfObjectsEnd(t *testing.T) {
	for _, e := range realpod.New(4).ManagedFields {
		raw := append(bytes.Clone(e.FieldsV1.Raw), ",x"...)
		end, ok := objectsOfObjectsEnd(raw, 0)
		require.True(t, ok, "%s", raw)
		assert.Equal(t, len(e.FieldsV1.Raw), end)
	}
	for _, raw := range []string{`{"a":1}`, `{"a":{"b":[]}}`, `{"\u0061":{}}`, `{"é":{}}`, `{"a":{},}`, `{"a"{}}`, `{{}}`, `{"a":{}`,
		`{"a\`, "{\"\x01\":{}}", strings.Repeat(`{"a":`, maxPlainDepth) + `{}` + strings.Repeat(`}`, maxPlainDepth)} {
		_, ok := objectsOfObjectsEnd([]byte(raw), 0)
		assert.False(t, ok, "%s", raw)
	}
}

// A pod's managedFields are cut out and read by hand only when encoding/json
// would fill the field from that one member: pods that repeat the key or
// spell it in other letter case, or whose managedFields the reader refuses,
// still decode as encoding/json decodes them whole, value or error.
func TestJSONPartsManagedFieldsPods(t *testing.T) {
	mf := string(marshalJSON(t, realpod.New(2).ManagedFields))
	cases := map[string]string{
		"plain":            `{"metadata":{"name":"a","managedFields":` + mf + `,"labels":{"x":"y"}}}`,
		"twice":            `{"metadata":{"managedFields":` + mf + `,"managedFields":[{"manager":"b"}]}}`,
		"other case":       `{"metadata":{"ManagedFields":[{"manager":"b"}],"managedFields":` + mf + `}}`,
		"other case only":  `{"metadata":{"MANAGEDFIELDS":` + mf + `}}`,
		"escaped key":      `{"metadata":{"m\u0061nagedFields":[{"manager":"b"}],"managedFields":` + mf + `}}`,
		"refused":          `{"metadata":{"managedFields":[{"manager":"m","future":{"x":1}}]}}`,
		"null":             `{"metadata":{"managedFields":null}}`,
		"wrong type":       `{"metadata":{"managedFields":[{"manager":5}],"labels":{"x":"y"}}}`,
		"bad time":         `{"metadata":{"managedFields":[{"time":"soon"}]}}`,
		"invalid fieldsV1": `{"metadata":{"managedFields":[{"fieldsV1":{"a":}}]}}`,
		"in spec":          `{"spec":{"managedFields":` + mf + `,"containers":[{"name":"a"}]}}`,
	}
	for _, drop := range []bool{false, true} {
		d := newJSONPartsTest(t, drop)
		for name, raw := range cases {
			t.Run(fmt.Sprintf("%s/drop=%v", name, drop), func(t *testing.T) {
				checkJSONPod(t, d, []byte(raw))
			})
		}
	}
	// A realpod pod's managedFields are read by hand, not by encoding/json.
	d := newJSONPartsTest(t, false)
	raw := marshalJSON(t, realpod.New(3))
	require.True(t, d.cut(raw))
	require.NotZero(t, d.managed.end, "managedFields cut out of the rest")
	assert.NotContains(t, string(d.rest), managedFieldsKey)
	assert.True(t, checkReadManagedFields(t, d.managed.of(raw)), "realpod's managedFields read by hand")
	d = newJSONPartsTest(t, true)
	require.True(t, d.cut(raw))
	assert.Zero(t, d.managed.end, "managedFields skipped by the target are left to it")
}

// BenchmarkReadManagedFields: a realpod pod's managedFields (two entries,
// 1.9 KB) decoded by encoding/json and read by hand.
//
// Run: go test -run '^$' -bench ReadManagedFields -benchmem ./reflector/wire/
func BenchmarkReadManagedFields(b *testing.B) {
	raw := marshalJSON(b, realpod.New(7).ManagedFields)
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			var v []metav1.ManagedFieldsEntry
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("by-hand", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, ok := readManagedFields(raw); !ok {
				b.Fatal("refused")
			}
		}
	})
}
