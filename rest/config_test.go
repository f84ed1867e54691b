package rest

import (
	"context"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Host: "https://h:6443"}
	cases := []struct {
		name  string
		edit  func(*Config)
		field string // "" = valid
	}{
		{"minimal", func(c *Config) {}, ""},
		{"http with path prefix", func(c *Config) { c.Host = "http://127.0.0.1:8080/prefix" }, ""},
		{"no host", func(c *Config) { c.Host = "" }, "Host"},
		{"no scheme", func(c *Config) { c.Host = "h:6443" }, "Host"},
		{"ftp", func(c *Config) { c.Host = "ftp://h" }, "Host"},
		{"query in host", func(c *Config) { c.Host = "https://h/?x=1" }, "Host"},
		{"token and token file", func(c *Config) { c.BearerToken, c.BearerTokenFile = "t", "/f" }, "BearerTokenFile"},
		{"cert without key", func(c *Config) { c.CertFile = "/c" }, "CertFile/KeyFile"},
		{"key data without cert", func(c *Config) { c.KeyData = []byte("k") }, "CertFile/KeyFile"},
		{"cert data, key file", func(c *Config) { c.CertData, c.KeyFile = []byte("c"), "/k" }, ""},
		{"cert file, key data", func(c *Config) { c.CertFile, c.KeyData = "/c", []byte("k") }, ""},
		{"cert file and data", func(c *Config) { c.CertFile, c.KeyFile, c.CertData, c.KeyData = "/c", "/k", []byte("c"), []byte("k") }, "CertData"},
		{"key file and data", func(c *Config) { c.CertFile, c.KeyFile, c.KeyData = "/c", "/k", []byte("k") }, "KeyData"},
		{"CA file and data", func(c *Config) { c.CAFile, c.CAData = "/ca", []byte("ca") }, "CAData"},
		{"insecure with CA", func(c *Config) { c.Insecure, c.CAData = true, []byte("ca") }, "Insecure"},
		{"bad content type", func(c *Config) { c.ContentType = "application/yaml" }, "ContentType"},
		{"negative frame limit", func(c *Config) { c.MaxFrameBytes = -1 }, "MaxFrameBytes"},
		{"frame limit beyond 32 bits", func(c *Config) { c.MaxFrameBytes = 1 << 33 }, "MaxFrameBytes"},
		{"negative object limit", func(c *Config) { c.MaxObjectBytes = -1 }, "MaxObjectBytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.field == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Host: "https://h"}.WithDefaults()
	assert.EqualValues(t, DefaultMaxFrameBytes, c.MaxFrameBytes)
	assert.EqualValues(t, DefaultMaxObjectBytes, c.MaxObjectBytes)
	assert.Equal(t, DefaultTimeout, c.Timeout)
	assert.Equal(t, DefaultUserAgent, c.UserAgent)

	_, err := New(Config{Host: "https://h", ContentType: ContentTypeProtobuf})
	assert.NoError(t, err)
	_, err = New(Config{})
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// A negative Timeout turns the client-side bound off; taken literally as a
// -1ns deadline it would fail every List.
func TestNegativeTimeoutDisablesIt(t *testing.T) {
	ts := testserver.New(t, testserver.ServeBody(ContentTypeJSON, 200, testserver.PodListJSON(t)))
	lw := newTestLW(t, ts, func(c *Config) { c.Timeout = -1 })
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	assert.NoError(t, err)
}
