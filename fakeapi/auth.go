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
	return s.tokenMatches(strings.TrimSpace(header[len(prefix):]))
}

// tokenMatches compares a token with Options.Token in constant time.
func (s *Server) tokenMatches(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) == 1
}
