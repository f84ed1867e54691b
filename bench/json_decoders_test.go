package bench

import (
	stdjson "encoding/json"
	"reflect"
	"testing"

	gojson "github.com/goccy/go-json"
	jsoniter "github.com/json-iterator/go"
	segjson "github.com/segmentio/encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/seed31a95821/informer/internal/realpod"
)

// Candidates for decoding JSON faster than encoding/json while keeping
// Kubernetes' decoding rules: field names matched case-sensitively, the
// API types' own UnmarshalJSON (Quantity, Time, IntOrString, FieldsV1),
// and integers kept as integers where a value is untyped. Each is checked
// against those rules (TestJSONDecoderRules) and timed on a realistic pod
// (BenchmarkJSONDecoders). docs/benchmarks.md ("JSON decoders") has the
// figures and the verdict.
//
// Run: go test -run JSONDecoder -bench JSONDecoders -benchmem ./ (in bench/)

// jsonDecoder decodes data into v, as one candidate does.
type jsonDecoder struct {
	name      string
	unmarshal func(data []byte, v any) error
}

var jsoniterK8s = jsoniter.Config{CaseSensitive: true, EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()

var jsonDecoders = []jsonDecoder{
	{"encoding/json", stdjson.Unmarshal},
	{"sigs.k8s.io/json", sigsjson.UnmarshalCaseSensitivePreserveInts},
	{"json-iterator (case-sensitive)", jsoniterK8s.Unmarshal},
	{"goccy/go-json", gojson.Unmarshal},
	{"segmentio (case-sensitive)", func(data []byte, v any) error {
		_, err := segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
		return err
	}},
}

func realPodJSON(t testing.TB) []byte {
	raw, err := stdjson.Marshal(realpod.New(7))
	require.NoError(t, err)
	return raw
}

// jsonRules are Kubernetes' decoding rules, each a check of one decoder.
var jsonRules = []struct {
	name  string
	holds func(t *testing.T, d jsonDecoder) bool
}{
	{"real pod as encoding/json", func(t *testing.T, d jsonDecoder) bool {
		// Quantities, times, int-or-strings, managedFields: the API
		// types' own UnmarshalJSON methods are called.
		raw := realPodJSON(t)
		var want, got corev1.Pod
		require.NoError(t, stdjson.Unmarshal(raw, &want))
		return d.unmarshal(raw, &got) == nil && reflect.DeepEqual(want, got)
	}},
	{"case-sensitive names", func(t *testing.T, d jsonDecoder) bool {
		var p corev1.Pod
		err := d.unmarshal([]byte(`{"metadata":{"name":"a","Name":"b"},"Spec":{"nodeName":"x"}}`), &p)
		return err == nil && p.Name == "a" && p.Spec.NodeName == ""
	}},
	{"untyped integers kept", func(t *testing.T, d jsonDecoder) bool {
		var m map[string]any
		err := d.unmarshal([]byte(`{"big":9007199254740993}`), &m)
		return err == nil && m["big"] == int64(9007199254740993)
	}},
}

// What each candidate makes of Kubernetes' rules, as docs/benchmarks.md
// reports it: a candidate is usable only if it keeps every rule. (The wire
// decodes typed objects only, so "untyped integers" matters for custom
// resources, which it does not decode.)
func TestJSONDecoderRules(t *testing.T) {
	want := map[string][]bool{ // per candidate, per rule in jsonRules order
		"encoding/json":                  {true, false, false},
		"sigs.k8s.io/json":               {true, true, true},
		"json-iterator (case-sensitive)": {true, true, false},
		"goccy/go-json":                  {true, false, false},
		"segmentio (case-sensitive)":     {true, true, false},
		"encoding/json/v2":               {true, true, false},
	}
	for _, d := range append(jsonDecoders, jsonV2Decoders...) {
		var got []bool
		for _, r := range jsonRules {
			got = append(got, r.holds(t, d))
		}
		assert.Equal(t, want[d.name], got, "%s, rules in jsonRules order", d.name)
	}
}

func BenchmarkJSONDecoders(b *testing.B) {
	raw := realPodJSON(b)
	for _, d := range append(jsonDecoders, jsonV2Decoders...) {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			cpu0 := processCPU() // CPU, not wall time: the machine is shared
			for b.Loop() {
				var p corev1.Pod
				if err := d.unmarshal(raw, &p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
