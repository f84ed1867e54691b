package wire

import (
	"io"
	"net/http"

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
	var red redactor
	// An error path, so reading a token file again here is cheap enough;
	// an exec plugin's credentials are found through the shared *ExecConfig.
	if auth, err := newAuthenticator(cfg); err == nil {
		red.auth = auth
	}
	return errorFromResponse(resp, body, verb, gr, red)
}
