package fakeapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// authorized checks the bearer token when Options.Token is set. The
// comparison takes constant time so the token cannot be guessed byte by
// byte from response timings.
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	const prefix = "Bearer "
	header := r.Header.Get("Authorization")
	if !strings.HasPrefix(header, prefix) {
		return false
	}
	got := strings.TrimSpace(header[len(prefix):])
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}
