package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func TestContentNegotiation(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b")
	list := srv.URL() + "/api/v1/namespaces/ns/pods"
	cases := []struct {
		name, url, accept, contentType string
		check                          func(t *testing.T, body []byte)
	}{
		{"default json", list, "", mediaJSON, func(t *testing.T, body []byte) {
			require.Len(t, decodeJSON(t, body).(*corev1.PodList).Items, 2)
		}},
		{"protobuf list", list, mediaProtobuf, mediaProtobuf, func(t *testing.T, body []byte) {
			require.Equal(t, "k8s\x00", string(body[:4]))
			require.Len(t, decodeJSON(t, body).(*corev1.PodList).Items, 2)
		}},
		{"protobuf get", list + "/a", mediaProtobuf + ", application/json", mediaProtobuf, func(t *testing.T, body []byte) {
			require.Equal(t, "a", decodeJSON(t, body).(*corev1.Pod).Name)
		}},
		{"q values", list + "/a", "application/json;q=0.5, application/vnd.kubernetes.protobuf", mediaProtobuf, nil},
		{"partial list json", list, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", mediaJSON, func(t *testing.T, body []byte) {
			pl := decodeJSON(t, body).(*metav1.PartialObjectMetadataList)
			require.Len(t, pl.Items, 2)
			require.Equal(t, "PartialObjectMetadata", pl.Items[0].Kind)
			require.Equal(t, "2", pl.ResourceVersion)
		}},
		{"partial list protobuf", list, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", mediaProtobuf, func(t *testing.T, body []byte) {
			require.Len(t, decodeJSON(t, body).(*metav1.PartialObjectMetadataList).Items, 2)
		}},
		{"partial get", list + "/a", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", mediaJSON, func(t *testing.T, body []byte) {
			p := decodeJSON(t, body).(*metav1.PartialObjectMetadata)
			require.Equal(t, "a", p.Name)
			require.Equal(t, map[string]string{"name": "a"}, p.Labels)
		}},
		{"table", list, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", mediaJSON, func(t *testing.T, body []byte) {
			table := decodeJSON(t, body).(*metav1.Table)
			require.Len(t, table.Rows, 2)
			require.Equal(t, "Status", table.ColumnDefinitions[2].Name)
		}},
		{"table v1beta1 falls back", list, "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", mediaJSON, func(t *testing.T, body []byte) {
			require.IsType(t, &corev1.PodList{}, decodeJSON(t, body))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, header := do(t, http.MethodGet, tc.url, "", "", "Accept", tc.accept)
			require.Equal(t, http.StatusOK, code, "%s", body)
			require.Equal(t, tc.contentType, header.Get("Content-Type"))
			if tc.check != nil {
				tc.check(t, body)
			}
		})
	}

	code, body, _ := do(t, http.MethodGet, list, "", "", "Accept", "text/html")
	require.Equal(t, http.StatusNotAcceptable, code)
	require.Equal(t, metav1.StatusReasonNotAcceptable, decodeStatus(t, body).Reason)
}

func TestProtobufRequestBodies(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	p := validPod("ns", "a", nil)
	p.APIVersion, p.Kind = "v1", "Pod"
	info := srv.encodingFor(mediaProtobuf, asFull)
	var buf []byte
	{
		w := &bytesWriter{}
		require.NoError(t, info.info.Serializer.Encode(p, w))
		buf = w.b
	}
	code, body, _ := do(t, http.MethodPost, podsURL(srv), mediaProtobuf, string(buf), "Accept", mediaProtobuf)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	require.Equal(t, "2", decodeJSON(t, body).(*corev1.Pod).ResourceVersion, "RV 1 is the namespace")
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// The real server negotiates a watch's media type among those that can
// stream (JSON, protobuf) and answers 406 for the others, as it does when
// the shape asked for with "as" does not fit the answer: a list asked for
// as PartialObjectMetadata, or one object as PartialObjectMetadataList.
// Those 406 Statuses carry no details; only the one for an Accept header
// the server cannot serve at all has an empty details object (pinned
// against kube-apiserver by the conformance probe "Accept: a media type
// the server cannot produce").
func TestNotAcceptableShapes(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	list := podsURL(srv)
	cases := []struct{ name, url, accept, message, details string }{
		{"yaml watch", list + "?watch=true", mediaYAML,
			"only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch", ""},
		{"list as one object", list, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json",
			"you requested PartialObjectMetadata, but the requested object is a list", ""},
		{"one object as a list", list + "/a", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
			"you requested PartialObjectMetadataList, but the requested object is not a list", ""},
		{"unserved media type", list, "text/csv", "406: Not Acceptable\n\nAvailable representations: ", "{}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, http.MethodGet, tc.url, "", "", "Accept", tc.accept)
			require.Equal(t, http.StatusNotAcceptable, code, "%s", body)
			st, ok := decodeJSON(t, body).(*metav1.Status)
			require.True(t, ok, "%s", body)
			require.Equal(t, metav1.StatusReasonNotAcceptable, st.Reason)
			require.Contains(t, st.Message, tc.message)
			asJSON, err := yaml.YAMLToJSON(body) // the YAML watch's 406 is YAML
			require.NoError(t, err)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(asJSON, &raw))
			require.Equal(t, tc.details, string(raw["details"]), "details of %s", body)
		})
	}
}
