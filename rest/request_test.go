package rest_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/seed31a95821/informer/rest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// Package client builds its object and subresource URLs with the same
// function as the ListerWatcher's collection URL.
func TestResourceURLUnderTheCollection(t *testing.T) {
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	deploys := appsv1.SchemeGroupVersion.WithResource("deployments")
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"object", restClient(t, "https://h").URL(pods, "shop", "web-1").String(), "https://h/api/v1/namespaces/shop/pods/web-1"},
		{"subresource", restClient(t, "https://h").URL(deploys, "shop", "web", "scale").String(), "https://h/apis/apps/v1/namespaces/shop/deployments/web/scale"},
		{"empty parts skipped", restClient(t, "https://h/").URL(pods, "", "", "").String(), "https://h/api/v1/pods"},
		{"behind a proxy path", restClient(t, "https://p/k8s/c1").URL(pods, "", "a").String(), "https://p/k8s/c1/api/v1/pods/a"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.got, tc.name)
	}
}

func TestAcceptHeader(t *testing.T) {
	const both = rest.ContentTypeProtobuf + ", " + rest.ContentTypeJSON
	cases := []struct {
		contentType string
		protobuf    bool
		want        string
	}{
		{"", true, both},
		{"", false, rest.ContentTypeJSON},
		{rest.ContentTypeJSON, true, rest.ContentTypeJSON},
		{rest.ContentTypeProtobuf, true, rest.ContentTypeProtobuf},
		// A type without a protobuf form is asked for in JSON even when
		// the config forces protobuf (package client writes custom
		// types so; New refuses the combination for a ListerWatcher).
		{rest.ContentTypeProtobuf, false, rest.ContentTypeJSON},
		// CBOR is asked for only by the callers that decode it (wire's
		// unstructured mode); everywhere else it negotiates as "" does.
		{rest.ContentTypeCBOR, true, both},
		{rest.ContentTypeCBOR, false, rest.ContentTypeJSON},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, rest.AcceptHeader(tc.contentType, tc.protobuf), "%q protobuf=%v", tc.contentType, tc.protobuf)
	}
}

// restClient builds a Client for host, failing the test if New refuses it.
func restClient(t *testing.T, host string) *rest.Client {
	t.Helper()
	c, err := rest.New(rest.Config{Host: host})
	require.NoError(t, err)
	return c
}

// A response's Content-Type names its encoding; CBOR's two names (an
// object, a watch's sequence) are one encoding, and a body without a
// header is sniffed by its magic.
func TestResponseMediaType(t *testing.T) {
	cases := []struct {
		header string
		body   []byte
		want   string
	}{
		{"application/json; charset=utf-8", nil, rest.ContentTypeJSON},
		{"application/vnd.kubernetes.protobuf;stream=watch", nil, rest.ContentTypeProtobuf},
		{"application/cbor", nil, rest.ContentTypeCBOR},
		{"application/cbor-seq", nil, rest.ContentTypeCBOR},
		{"", []byte("k8s\x00..."), rest.ContentTypeProtobuf},
		{"", []byte{0xd9, 0xd9, 0xf7, 0xa0}, rest.ContentTypeCBOR},
		{"", []byte("{}"), rest.ContentTypeJSON},
	}
	for _, tc := range cases {
		got, err := rest.ResponseMediaType(tc.header, tc.body)
		require.NoError(t, err, tc.header)
		assert.Equal(t, tc.want, got, "%q %q", tc.header, tc.body)
	}
	_, err := rest.ResponseMediaType("text/html", nil)
	assert.ErrorIs(t, err, rest.ErrUnsupportedMediaType)
}

// A server that answers in CBOR explains its errors in CBOR: the Status is
// read as it is from JSON or protobuf.
func TestErrorFromACBORStatus(t *testing.T) {
	status := metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
		Code: http.StatusConflict, Reason: metav1.StatusReasonAlreadyExists, Message: `gadgets "g1" already exists`}
	body, err := direct.Marshal(status)
	require.NoError(t, err)
	resp := &http.Response{StatusCode: http.StatusConflict, Header: http.Header{"Content-Type": {rest.ContentTypeCBOR}},
		Body: io.NopCloser(bytes.NewReader(append([]byte{0xd9, 0xd9, 0xf7}, body...)))}
	err = restClient(t, "https://h").Error(resp, "create", schema.GroupResource{Group: "example.com", Resource: "gadgets"})
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	assert.ErrorContains(t, err, `gadgets "g1" already exists`)
}
