package rest

import (
	"fmt"
	"github.com/seed31a95821/informer/internal/boundedfile"
	"slices"
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

	mu     sync.Mutex // guards token, readAt, used
	token  string     // last successfully read token
	readAt time.Time  // when token was read; zero forces a re-read
	// used holds the tokens read from the file, the current one last, at
	// most maxRememberedTokens: a request sent with the previous token
	// may fail after a rotation, and its error must not show it either.
	used []string
}

// maxRememberedTokens is how many tokens read from a file are redacted
// from errors: the current one and those it replaced recently.
const maxRememberedTokens = 4

// newTokenSource reads the token file once, so that a missing or empty file
// is reported when the Client is built rather than as a stream of
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
	ts.token, ts.readAt, ts.used = tok, ts.now(), []string{tok}
	return ts, nil
}

// secrets returns every token this source has handed out that errors must
// not show. The slice is clipped: a caller that appends to it copies it,
// never writing into the spare capacity of the source's own, which other
// goroutines read.
func (ts *tokenSource) secrets() []string {
	if ts.path == "" {
		return []string{ts.static}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return slices.Clip(ts.used)
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
			ts.remember(tok)
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
	b, err := boundedfile.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("rest: reading bearer token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", &ConfigError{Field: "BearerTokenFile", Reason: path + " is empty"}
	}
	return tok, nil
}

// remember makes tok the current token. ts.mu must be held.
func (ts *tokenSource) remember(tok string) {
	ts.token = tok
	if n := len(ts.used); n > 0 && ts.used[n-1] == tok {
		return
	}
	// A new slice each time: secrets hands the old one out unlocked.
	used := append([]string(nil), ts.used...)
	used = append(used, tok)
	if len(used) > maxRememberedTokens {
		used = used[len(used)-maxRememberedTokens:]
	}
	ts.used = used
}
