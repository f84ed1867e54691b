package wire

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// tokenRefreshPeriod is how long a token read from a file is trusted before
// the file is read again. Kubelet rotates projected service-account tokens
// well before they expire (at 80% of their lifetime, at least an hour), so
// re-reading once a minute always picks up the new one in time.
const tokenRefreshPeriod = time.Minute

// tokenSource yields the bearer token for each request. With a static token
// it is a constant; with a token file it caches the file's content and
// re-reads it when the cache is older than tokenRefreshPeriod or after the
// server answered 401 (the token we sent may have just been rotated).
//
// A tokenSource is safe for concurrent use.
type tokenSource struct {
	static string // used when path is empty
	path   string
	now    func() time.Time // injectable clock for tests

	mu     sync.Mutex // guards token, readAt
	token  string     // last successfully read token
	readAt time.Time  // when token was read; zero forces a re-read
}

// newTokenSource reads the token file once, so that a missing or empty file
// is reported when the ListerWatcher is built rather than as a stream of
// 401s later.
func newTokenSource(static, path string) (*tokenSource, error) {
	ts := &tokenSource{static: static, path: path, now: time.Now}
	if path == "" {
		return ts, nil
	}
	tok, err := readTokenFile(path)
	if err != nil {
		return nil, err
	}
	ts.token, ts.readAt = tok, ts.now()
	return ts, nil
}

// Token returns the current token, re-reading the file when due. A failed
// re-read keeps the last good token: a file briefly missing during an atomic
// rename must not break every request.
func (ts *tokenSource) Token() string {
	if ts.path == "" {
		return ts.static
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if now := ts.now(); now.Sub(ts.readAt) >= tokenRefreshPeriod || ts.readAt.IsZero() {
		if tok, err := readTokenFile(ts.path); err == nil {
			ts.token = tok
		}
		ts.readAt = now
	}
	return ts.token
}

// Invalidate makes the next Token call re-read the file. It is called after
// a 401 response.
func (ts *tokenSource) Invalidate() {
	if ts.path == "" {
		return
	}
	ts.mu.Lock()
	ts.readAt = time.Time{}
	ts.mu.Unlock()
}

func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("wire: reading bearer token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", &ConfigError{Field: "BearerTokenFile", Reason: path + " is empty"}
	}
	return tok, nil
}
