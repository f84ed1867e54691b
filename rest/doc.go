// Package rest connects to one Kubernetes API server: the HTTP transport,
// the credentials, the request rate limit, and the decoding of error
// answers. It is the one place a connection is set up, shared by the
// informers (reflector/wire speaks the list/watch protocol over it), the
// write client (package client), and requests of your own.
//
//	Config ──rest.New──▶ *Client ──Do──▶ API server
//	                         ▲
//	      wire.ListerWatcher, client.Client, your code
//
// # Config and Client
//
// Config says how to reach and authenticate to a server: Host, a bearer
// token or token file, a client certificate, an exec credential plugin
// (ExecConfig), a CA bundle, a proxy, and the limits (timeouts, body
// sizes, QPS and Burst). It is a plain value; package kubeconfig fills one
// from a kubeconfig or a pod's service account, as kubectl does.
//
// New builds a *Client from a Config, once: it validates the Config, reads
// the files it names, builds the HTTP transport (NewHTTPClient, or
// Config.HTTPClient to share a connection pool), adds the credentials, and
// sets the one redirect rule. Every request through Client.Do then waits
// on the rate limit, carries the User-Agent and the credentials (only to
// the configured host), gives up when the response headers do not come in
// time, and is counted in Config.Metrics. Client.Error turns a non-2xx
// answer into an *apierrors.StatusError, so apierrors.IsNotFound,
// IsResourceExpired, IsTooManyRequests and SuggestsClientDelay work as
// with client-go. Share a Client to share the rate budget and, over
// HTTP/2, one TCP connection: informer.NewFactory builds one for all its
// informers.
//
// # Credentials
//
// A token file is re-read every minute and after a 401, because projected
// service-account tokens are rotated on disk. An exec plugin (exec.go) runs
// once for many requests, its credential cached until it expires or a 401
// drops it; a plugin that fails is backed off, and one that outlives its
// Timeout is killed with every process it started. A client certificate
// from a plugin follows its rotation (cert_rotating_transport.go). A 401
// answered to a Client's request drops the cached credential, so the next
// request carries a fresh one; NewAuthenticatedClient, for an
// *http.Client of your own, also retries the request once.
//
// # A server is not trusted
//
// Credentials go only to the configured server (Config.Host, by scheme
// and host): a request of yours for another host through the same client
// carries no token and is shown no client certificate (a proxy reached
// over TLS is the one exception, Go's: see origin_transport.go), and no
// redirect is followed: a 3xx is a *RedirectError. Text the server wrote (Status
// messages, error pages) has every credential redacted before it becomes
// an error (redact.go). Response bodies are read with ReadBody, which
// refuses more than a limit of inflated bytes and believes a
// Content-Length only up to 1 MiB before the bytes arrive. The wait for
// response headers is bounded (ResponseHeaderTimeout), and requests wait
// on a token bucket (QPS and Burst, or a shared RateLimiter), a second line
// of defence against a retry loop a broken server could provoke.
//
// Files are input too: every file a Config names (CA bundle, client
// certificate and key, token file) is read only when it is a regular file
// of at most MaxFileBytes; anything else is a *FileError. Certificate files
// are read once, when the client is built; only the token file is re-read.
//
// # Errors
//
// The package's sentinel errors are listed in errors.go: an invalid Config
// (*ConfigError, ErrInvalidConfig), a failed exec plugin (*ExecError,
// ErrExecPlugin), a refused file, a refused redirect, a body too large, a
// response-header timeout, an unsupported media type.
package rest
