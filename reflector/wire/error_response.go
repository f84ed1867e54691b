package wire

import (
	"io"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file exports, for the write client in client/, the one piece of the
// ListerWatcher's request path that every API client needs besides
// authentication (NewAuthRoundTripper): the decoding of error responses.

// ErrorFromResponse turns a non-2xx response from the server cfg describes
// into the error the ListerWatcher would return: an *apierrors.StatusError
// from the server's Status body, or one built from the HTTP code when the
// body is something else (with at most 512 bytes of it quoted), Retry-After
// included, and cfg's credentials redacted from its text as in every error
// of this package. It reads at most 64 KiB of the body and does not close
// it.
func ErrorFromResponse(cfg Config, resp *http.Response, verb string, gr schema.GroupResource) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	// The token this very request carried is what a server can echo, so it
	// is redacted first, whatever the file holds now (it may have rotated,
	// or be unreadable). What cfg names besides is redacted too: the token
	// file's current contents, and an exec plugin's recent credentials,
	// found through the shared *ExecConfig.
	auth, err := newAuthenticator(cfg)
	if err != nil { // the token file is unreadable: what cfg holds besides
		auth = &authenticator{cfg: cfg, tokens: &tokenSource{static: cfg.BearerToken}}
	}
	red := redactor{auth: auth, extra: sentToken(resp)}
	return errorFromResponse(resp, body, verb, gr, red)
}

// sentToken is the bearer token resp's request carried, or "".
func sentToken(resp *http.Response) string {
	if resp.Request == nil {
		return ""
	}
	return strings.TrimPrefix(resp.Request.Header.Get("Authorization"), "Bearer ")
}
