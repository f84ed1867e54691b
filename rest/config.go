package rest

import (
	"net/http"
	"net/url"
	"time"

	"golang.org/x/time/rate"

	"github.com/seed31a95821/informer/metrics"
)

// Media types this package speaks. The protobuf one is Kubernetes' own
// envelope format ("k8s\x00" magic + runtime.Unknown), not bare protobuf.
// CBOR (RFC 8949) is what kube-apiserver serves, behind its
// CBORServingAndStorage feature gate, to clients that ask for it; its
// watch streams are CBOR sequences (application/cbor-seq).
const (
	ContentTypeJSON     = "application/json"
	ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"
	ContentTypeCBOR     = "application/cbor"
)

// Defaults applied when the matching Config field is zero.
const (
	// DefaultMaxFrameBytes bounds one watch frame. The API server itself
	// refuses objects above ~1.5 MiB (etcd's request limit), so 16 MiB leaves
	// ample room while stopping a corrupt length prefix from making us
	// allocate gigabytes.
	DefaultMaxFrameBytes = 16 << 20
	// DefaultMaxObjectBytes bounds one non-watch response. A list page is a
	// single object, and an unpaged list served from the watch cache can be
	// hundreds of megabytes on a big cluster, hence the generous default.
	DefaultMaxObjectBytes = 1 << 30
	// DefaultTimeout bounds non-watch requests. The API server gives up on
	// a list after 60s by default; waiting a little longer lets its own
	// timeout Status reach us instead of a bare client-side deadline.
	DefaultTimeout = 90 * time.Second
	// DefaultUserAgent is sent when Config.UserAgent is empty.
	DefaultUserAgent = "informer-wire/v0"
	// DefaultResponseHeaderTimeout bounds the wait for a list's or a
	// watch's response headers: the API server's own request timeout
	// (--request-timeout, one minute). A server that has not started to
	// answer by then will not, and a watch whose headers never come would
	// otherwise hold an informer in Watching, its cache going stale, with
	// no error at all.
	DefaultResponseHeaderTimeout = time.Minute
	// DefaultQPS and DefaultBurst are the client-side request rate limit.
	// A healthy informer makes a handful of requests every five minutes
	// (a watch per timeout, a bookmark-fed resume), and its largest burst
	// is a start: one WatchList or a list of a few pages per resource. 300
	// requests at once cover a factory of a hundred informers starting
	// together, or a list of 150,000 objects in pages of 500, without a
	// wait; 50 a second sustained is far above what a healthy informer
	// asks, and far below the thousands a hot loop against a broken server
	// would send. (client-go defaults to 5 and 10, which make a big
	// paged list wait; kubectl uses 50 and 300.)
	DefaultQPS   = 50
	DefaultBurst = 300
)

// Config says how to reach and authenticate to one API server. The zero
// value is not usable (Host is required); everything else defaults sensibly.
// A Config is a plain value: copy it freely. It is read, never modified, by
// this package. Copies share its pointers, each on purpose: RateLimiter
// (one request budget for every Client built from the Config), HTTPClient
// (one connection pool), Metrics (one registry) and the *ExecConfig (one
// cached plugin credential).
type Config struct {
	// Host is the server's base URL, "https://host:port" with an optional
	// path prefix (some proxies serve the API under a path). The scheme is
	// required: we never guess between http and https.
	Host string

	// BearerToken is sent as "Authorization: Bearer <token>".
	BearerToken string
	// BearerTokenFile names a file holding the token. It is read when the
	// Client is built (a missing file is an error then) and re-read
	// every minute and after any 401, because projected service-account
	// tokens are rotated on disk. Mutually exclusive with BearerToken.
	BearerTokenFile string
	// Exec, when set, runs a credential plugin for a token and/or a client
	// certificate (see ExecConfig). It excludes the static credentials
	// above and below; a kubeconfig user with both gets only the static
	// ones, as with kubectl. Copies of a Config share the plugin's cache.
	Exec *ExecConfig

	// Client certificate and its key, each as a PEM file or PEM bytes (not
	// both forms of one; the certificate may be bytes and the key a file,
	// as a kubeconfig may mix client-certificate-data and client-key).
	CertFile, KeyFile string
	CertData, KeyData []byte

	// CA bundle used to verify the server, as a PEM file or PEM bytes (not
	// both). When neither is set the system roots are used.
	CAFile string
	CAData []byte
	// TLSServerName overrides the name checked against the server's
	// certificate (useful when Host is an IP address).
	TLSServerName string
	// Insecure disables server certificate verification. It is off by
	// default, cannot be combined with a CA, and exists for throw-away test
	// clusters only.
	Insecure bool
	// ProxyURL sends every request through this proxy (http, https or
	// socks5 scheme), as a kubeconfig's proxy-url does. Empty means the
	// $HTTPS_PROXY / $HTTP_PROXY / $NO_PROXY environment, as with kubectl.
	ProxyURL string
	// DisableCompression stops asking the server for gzip. Responses then
	// cost more bytes but no CPU to inflate, which wins on a fast network
	// (kubeconfig disable-compression).
	DisableCompression bool

	// UserAgent identifies the client in the server's audit log.
	UserAgent string
	// ContentType selects the wire encoding: "" negotiates (protobuf for
	// built-in types, which decodes several times faster, JSON otherwise),
	// ContentTypeJSON or ContentTypeProtobuf force one. ContentTypeCBOR
	// asks for CBOR, then JSON, where the module decodes CBOR (the
	// unstructured objects of a dynamic informer, reflector/wire's
	// Options.Unstructured) and negotiates as "" everywhere else; a
	// server without CBOR answers JSON.
	ContentType string

	// MaxFrameBytes bounds one watch frame (default DefaultMaxFrameBytes).
	MaxFrameBytes int64
	// MaxObjectBytes bounds one non-watch response body, e.g. a list page
	// (default DefaultMaxObjectBytes).
	MaxObjectBytes int64
	// Timeout bounds each non-watch request: 0 means DefaultTimeout, a
	// negative value means no client-side timeout. Watches are never timed
	// out here: they end by context, by Stop, or by the server's
	// timeoutSeconds.
	Timeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response headers of
	// every list and watch, from the moment the request is sent: 0 means
	// DefaultResponseHeaderTimeout, a negative value no bound. Once the
	// headers have come, a watch is bounded by the reflector's watchdog
	// and a list by Timeout.
	ResponseHeaderTimeout time.Duration

	// QPS and Burst limit the rate of requests (client-go's names): a
	// token bucket refilled at QPS tokens a second, holding at most Burst.
	// Each list page and each watch takes one token and waits for it. The
	// limit is a second line of defence against a retry loop a broken
	// server could provoke; the defaults (DefaultQPS, DefaultBurst) never
	// slow a healthy informer. 0 means the default; a negative QPS turns
	// the limit off.
	QPS   float32
	Burst int
	// RateLimiter, when set, is the limiter every Client built from this
	// Config uses, instead of one of its own built from QPS and Burst. It
	// is a pointer, so copies of the Config share it: that is how several
	// Clients share one budget (NewRateLimiter builds one). Everything
	// built on one Client (a factory's informers) shares its limiter
	// anyway, as client-go's clientsets share one per config.
	RateLimiter *rate.Limiter

	// HTTPClient, when set, is the client New builds on instead of one of
	// its own (NewHTTPClient): pass one NewHTTPClient result to several
	// Configs to share its connections. New adds the credentials and the
	// refusal of redirects to a copy of it, whatever it was built with.
	HTTPClient *http.Client
	// Metrics, when set, receives a count and a latency of every request,
	// under client-go's rest_client_* names (metrics/names.go).
	Metrics *metrics.Registry
}

// NewRateLimiter returns the limiter c's QPS and Burst describe (with
// their defaults), or nil when c.QPS is negative: no limit. Put it in
// Config.RateLimiter to share it between Clients.
func NewRateLimiter(c Config) *rate.Limiter {
	c = c.WithDefaults()
	if c.QPS < 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(c.QPS), c.Burst)
}

// Validate reports the first problem found in c as a *ConfigError (which
// wraps ErrInvalidConfig), or nil. It does not touch the file system; files
// are read when a client is built.
func (c Config) Validate() error {
	if err := validateHost(c.Host); err != nil {
		return err
	}
	checks := []struct {
		bad           bool
		field, reason string
	}{
		{c.BearerToken != "" && c.BearerTokenFile != "", "BearerTokenFile", "set together with BearerToken; choose one"},
		{(c.CertFile == "" && len(c.CertData) == 0) != (c.KeyFile == "" && len(c.KeyData) == 0), "CertFile/KeyFile", "a client certificate needs both the certificate and the key"},
		{c.CertFile != "" && len(c.CertData) > 0, "CertData", "set together with CertFile; choose one form"},
		{c.KeyFile != "" && len(c.KeyData) > 0, "KeyData", "set together with KeyFile; choose one form"},
		{c.CAFile != "" && len(c.CAData) > 0, "CAData", "set together with CAFile; choose one form"},
		{c.Insecure && (c.CAFile != "" || len(c.CAData) > 0), "Insecure", "a CA bundle and Insecure contradict each other"},
		{c.ContentType != "" && c.ContentType != ContentTypeJSON && c.ContentType != ContentTypeProtobuf && c.ContentType != ContentTypeCBOR,
			"ContentType", "must be empty, " + ContentTypeJSON + ", " + ContentTypeProtobuf + " or " + ContentTypeCBOR},
		{c.MaxFrameBytes < 0, "MaxFrameBytes", "must not be negative"},
		{c.MaxFrameBytes > 1<<32-1, "MaxFrameBytes", "must fit the 32-bit length prefix of protobuf frames"},
		{c.MaxObjectBytes < 0, "MaxObjectBytes", "must not be negative"},
		{c.Exec != nil && (c.hasTokenAuth() || c.hasCertAuth()), "Exec", "set together with a token or client certificate; choose one"},
		{c.Burst < 0, "Burst", "must not be negative"},
	}
	for _, ch := range checks {
		if ch.bad {
			return &ConfigError{Field: ch.field, Reason: ch.reason}
		}
	}
	if err := validateProxyURL(c.ProxyURL); err != nil {
		return err
	}
	if c.Exec != nil {
		return c.Exec.validate()
	}
	return nil
}

func (c Config) hasTokenAuth() bool { return c.BearerToken != "" || c.BearerTokenFile != "" }

func (c Config) hasCertAuth() bool {
	return c.CertFile != "" || len(c.CertData) > 0 || c.KeyFile != "" || len(c.KeyData) > 0
}

// validateProxyURL accepts what net/http can dial through, the schemes
// kubectl accepts too.
func validateProxyURL(proxy string) error {
	if proxy == "" {
		return nil
	}
	u, err := url.Parse(proxy)
	if err != nil {
		return &ConfigError{Field: "ProxyURL", Reason: err.Error()}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5":
		return &ConfigError{Field: "ProxyURL", Reason: "needs an http, https or socks5 scheme, got " + proxy}
	case u.Host == "":
		return &ConfigError{Field: "ProxyURL", Reason: "has no host part: " + proxy}
	}
	return nil
}

func validateHost(host string) error {
	if host == "" {
		return &ConfigError{Field: "Host", Reason: "is required"}
	}
	u, err := url.Parse(host)
	if err != nil {
		return &ConfigError{Field: "Host", Reason: err.Error()}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &ConfigError{Field: "Host", Reason: "needs an http:// or https:// scheme, got " + host}
	}
	if u.Host == "" {
		return &ConfigError{Field: "Host", Reason: "has no host part: " + host}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return &ConfigError{Field: "Host", Reason: "must not carry a query or fragment"}
	}
	return nil
}

// WithDefaults returns c with every zero limit replaced by its default: the
// figures every user of a Client built from this Config (a
// ListerWatcher, package client) works with.
func (c Config) WithDefaults() Config {
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.MaxObjectBytes == 0 {
		c.MaxObjectBytes = DefaultMaxObjectBytes
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.ResponseHeaderTimeout == 0 {
		c.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	if c.QPS == 0 {
		c.QPS = DefaultQPS
	}
	if c.Burst == 0 {
		c.Burst = DefaultBurst
	}
	return c
}
