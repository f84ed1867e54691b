package wire_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer/reflector/wire"
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
		{"object", wire.ResourceURL("https://h", pods, "shop", "web-1").String(), "https://h/api/v1/namespaces/shop/pods/web-1"},
		{"subresource", wire.ResourceURL("https://h", deploys, "shop", "web", "scale").String(), "https://h/apis/apps/v1/namespaces/shop/deployments/web/scale"},
		{"empty parts skipped", wire.ResourceURL("https://h/", pods, "", "", "").String(), "https://h/api/v1/pods"},
		{"behind a proxy path", wire.ResourceURL("https://p/k8s/c1", pods, "", "a").String(), "https://p/k8s/c1/api/v1/pods/a"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.got, tc.name)
	}
}

func TestAcceptHeader(t *testing.T) {
	const both = wire.ContentTypeProtobuf + ", " + wire.ContentTypeJSON
	cases := []struct {
		contentType string
		protobuf    bool
		want        string
	}{
		{"", true, both},
		{"", false, wire.ContentTypeJSON},
		{wire.ContentTypeJSON, true, wire.ContentTypeJSON},
		{wire.ContentTypeProtobuf, true, wire.ContentTypeProtobuf},
		// A type without a protobuf form is asked for in JSON even when
		// the config forces protobuf (package client writes custom
		// types so; New refuses the combination for a ListerWatcher).
		{wire.ContentTypeProtobuf, false, wire.ContentTypeJSON},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, wire.AcceptHeader(tc.contentType, tc.protobuf), "%q protobuf=%v", tc.contentType, tc.protobuf)
	}
}
