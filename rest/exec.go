package rest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Interactive modes of an exec plugin. Requests here never have a terminal,
// so Never and IfAvailable both run the plugin without stdin and Always is
// refused.
const (
	ExecInteractiveNever       = "Never"
	ExecInteractiveIfAvailable = "IfAvailable"
	ExecInteractiveAlways      = "Always"
)

// DefaultExecTimeout bounds one plugin run. Cloud plugins answer from a
// cache in milliseconds and refresh over the network in seconds; one that
// takes a minute is hung (or waiting for a login it cannot get).
const DefaultExecTimeout = time.Minute

// Bounds on what a plugin may print. A credential is a few KiB; stderr
// only has to explain a failure.
const (
	maxExecStdoutBytes = 1 << 20
	maxExecStderrBytes = 4 << 10
)

// After a run that failed, the plugin is not run again until a delay has
// passed: requests in between get the same *ExecError at once. Without it,
// every request of every informer built from one Config would start the
// plugin again (a factory of many informers, each backing off on its own,
// would run a broken plugin many times a second). The delay starts at
// execRetryMin, doubles with each failure in a row up to execRetryMax, and
// a success resets it.
const (
	execRetryMin = time.Second
	execRetryMax = 30 * time.Second
)

// ExecEnvVar is one extra environment variable for an exec plugin.
type ExecEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ExecConfig runs a credential plugin (users[].user.exec in a kubeconfig),
// the way EKS, GKE and AKS kubeconfigs authenticate: the plugin prints an
// ExecCredential holding a bearer token and/or a client certificate.
//
// The credential is cached until its expirationTimestamp (or, without one,
// until the server answers 401) and shared by everything built from a
// Config holding this *ExecConfig: copies of a Config share the pointer,
// so a factory of many informers runs the plugin once. A failed run is not
// repeated at once: until a delay has passed (1s, doubling with each failure
// in a row, up to 30s) requests fail with the same error. An ExecConfig is
// safe for concurrent use and must not be copied after first use.
type ExecConfig struct {
	// APIVersion is ExecAPIVersionV1 or ExecAPIVersionV1Beta1; the plugin
	// must answer in the same version.
	APIVersion string
	// Command is run with Args; a bare name is looked up in $PATH.
	Command string
	Args    []string
	// Env is added to this process's environment for the plugin.
	Env []ExecEnvVar
	// InteractiveMode is "", Never or IfAvailable ("" behaves as
	// IfAvailable); Always is refused: there is no stdin to give.
	InteractiveMode string
	// ProvideClusterInfo passes the cluster (server, CA, ...) to the plugin
	// in $KUBERNETES_EXEC_INFO, with ClusterConfig as spec.cluster.config.
	ProvideClusterInfo bool
	ClusterConfig      json.RawMessage
	// InstallHint is shown when Command is not found.
	InstallHint string
	// Timeout bounds one run (default DefaultExecTimeout); a plugin still
	// running then is killed, with every process it started (its process
	// group, on Unix).
	Timeout time.Duration

	now func() time.Time // injectable clock for tests; nil = time.Now

	// mu guards cred and failed. It is held while the plugin runs, so that
	// concurrent requests wait for one run instead of starting one each.
	mu     sync.Mutex
	cred   *execResult // nil: run the plugin on next use
	failed execFailure // the last runs, when they failed

	// certGen counts the client certificates the plugin has rotated
	// through; transports start afresh when it moves.
	certGen atomic.Uint64

	// issued holds the secrets of the last maxRememberedTokens credentials
	// the plugin returned, for redaction (redact.go). It is an atomic, not
	// under mu, because mu is held while the plugin runs (up to Timeout),
	// and building an error message must never wait for that.
	issued atomic.Pointer[[]string]
}

// issuedSecrets returns the secrets of the credentials the plugin issued
// recently (nil before its first run).
func (e *ExecConfig) issuedSecrets() []string {
	if p := e.issued.Load(); p != nil {
		return *p
	}
	return nil
}

// remember records res's secrets among the issued ones. e.mu must be held,
// so that two runs never race to store. A new slice each time: readers hold
// the old one unlocked.
func (e *ExecConfig) remember(res *execResult) {
	issued := append(append([]string(nil), e.issuedSecrets()...), res.secrets...)
	if max := maxRememberedTokens * len(res.secrets); len(issued) > max {
		issued = issued[len(issued)-max:]
	}
	e.issued.Store(&issued)
}

// validate reports the first problem with e as a *ConfigError.
func (e *ExecConfig) validate() error {
	checks := []struct {
		bad           bool
		field, reason string
	}{
		{e.Command == "", "Exec.Command", "is required"},
		{e.APIVersion != ExecAPIVersionV1 && e.APIVersion != ExecAPIVersionV1Beta1, "Exec.APIVersion", "must be " + ExecAPIVersionV1 + " or " + ExecAPIVersionV1Beta1},
		{e.InteractiveMode == ExecInteractiveAlways, "Exec.InteractiveMode", "Always needs a terminal, and requests here have none"},
		{e.InteractiveMode != "" && e.InteractiveMode != ExecInteractiveNever && e.InteractiveMode != ExecInteractiveIfAvailable && e.InteractiveMode != ExecInteractiveAlways,
			"Exec.InteractiveMode", "must be Never, IfAvailable or Always, got " + e.InteractiveMode},
		{e.Timeout < 0, "Exec.Timeout", "must not be negative"},
	}
	for _, c := range checks {
		if c.bad {
			return &ConfigError{Field: c.field, Reason: c.reason}
		}
	}
	return nil
}

// credential returns the cached credential, running the plugin when there
// is none or it has expired. cluster is consulted only for
// ProvideClusterInfo.
func (e *ExecConfig) credential(ctx context.Context, cluster func() (*execCluster, error)) (*execResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now
	if e.now != nil {
		now = e.now
	}
	if c := e.cred; c != nil && (c.expiry.IsZero() || now().Before(c.expiry)) {
		return c, nil
	}
	if err := e.failed.pending(now()); err != nil {
		return nil, err
	}
	var info *execCluster
	if e.ProvideClusterInfo {
		var err error
		if info, err = cluster(); err != nil {
			return nil, err
		}
	}
	var previous []string
	if e.cred != nil {
		previous = e.cred.secrets
	}
	res, err := e.run(ctx, info, previous)
	if err != nil {
		// A request given up on says nothing about the plugin.
		if ctx.Err() == nil {
			e.failed.record(err, now())
		}
		return nil, err
	}
	e.failed = execFailure{}
	old := e.cred
	e.cred = res
	e.remember(res)
	if old != nil && !sameCertificate(old.cert, res.cert) {
		// A connection keeps the certificate of its handshake: transports
		// see the new generation and stop using the old connections (see
		// certRotatingTransport).
		e.certGen.Add(1)
	}
	return res, nil
}

// execFailure remembers the failed runs in a row of a plugin, so that it is
// not run again before its retry time. The zero value: no failure.
type execFailure struct {
	err     *ExecError
	retryAt time.Time
	delay   time.Duration // the wait after the last failure
}

// pending returns the last failure while its retry time is still ahead.
func (f *execFailure) pending(now time.Time) *ExecError {
	if f.err != nil && now.Before(f.retryAt) {
		return f.err
	}
	return nil
}

// record notes a failed run at now and sets when the next may start.
func (f *execFailure) record(err *ExecError, now time.Time) {
	f.delay = min(max(2*f.delay, execRetryMin), execRetryMax)
	f.err, f.retryAt = err, now.Add(f.delay)
}

func sameCertificate(a, b *tls.Certificate) bool {
	if a == nil || b == nil {
		return a == b
	}
	return len(a.Certificate) > 0 && len(b.Certificate) > 0 && bytes.Equal(a.Certificate[0], b.Certificate[0])
}

// invalidate forgets the cached credential after the server refused a
// request that carried token ("" for a certificate-only credential), so the
// next request runs the plugin again. Only the credential that failed is
// forgotten: when many requests fail at once with the same one, the plugin
// runs once.
func (e *ExecConfig) invalidate(token string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cred != nil && e.cred.token == token {
		e.cred = nil
	}
}

// run starts the plugin once, bounded by Timeout, and parses its answer.
func (e *ExecConfig) run(ctx context.Context, cluster *execCluster, previous []string) (*execResult, *ExecError) {
	timeout := e.Timeout
	if timeout == 0 {
		timeout = DefaultExecTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, err := execInfo(e.APIVersion, cluster)
	if err != nil {
		return nil, e.fail("could not encode KUBERNETES_EXEC_INFO", "", err)
	}
	cmd := exec.CommandContext(ctx, e.Command, e.Args...)
	cmd.Env = append(os.Environ(), "KUBERNETES_EXEC_INFO="+string(info))
	for _, v := range e.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	// No Stdin: the plugin reads /dev/null. On timeout the plugin's whole
	// process group is killed, its children with it; a grandchild that
	// escaped the group and keeps the pipes open must not hold us either
	// (WaitDelay).
	ownProcessGroup(cmd)
	stdout := &cappedBuffer{limit: maxExecStdoutBytes}
	stderr := &cappedBuffer{limit: maxExecStderrBytes}
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = stdout, stderr, time.Second
	runErr := cmd.Run()
	// Every credential the plugin issued recently, not only the cached one:
	// after a 401 the cache is empty, and the plugin may well name the
	// token that was just refused. (e.mu is held: issued is current.)
	out := decodeExecOutput(stdout.Bytes())
	secrets := append(append(append([]string(nil), e.issuedSecrets()...), previous...), out.secrets()...)
	errText := printable(redact(stderr.String(), secrets...))
	switch {
	case errors.Is(runErr, exec.ErrNotFound) || errors.Is(runErr, fs.ErrNotExist):
		reason := "was not found"
		if e.InstallHint != "" {
			reason += "; " + printable(e.InstallHint)
		}
		return nil, e.fail(reason, "", runErr)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && runErr != nil:
		return nil, e.fail(fmt.Sprintf("did not finish within %v and was killed", timeout), errText, ctx.Err())
	case ctx.Err() != nil && runErr != nil:
		return nil, e.fail("was stopped", errText, ctx.Err())
	case runErr != nil:
		return nil, e.fail("failed", errText, runErr)
	case stdout.overflow:
		return nil, e.fail(fmt.Sprintf("printed more than %d bytes on stdout", maxExecStdoutBytes), errText, nil)
	}
	res, err := out.parse(e.APIVersion)
	if err != nil {
		return nil, e.fail("returned an unusable ExecCredential", errText, err)
	}
	return res, nil
}

func (e *ExecConfig) fail(reason, stderr string, err error) *ExecError {
	return &ExecError{Command: e.Command, Reason: reason, Stderr: stderr, Err: err}
}

// clientCertificate is the TLS handshake's hook: the plugin's certificate,
// or none (an empty certificate) when it returned only a token. ctx is the
// handshake's, so a dial given up on does not keep a plugin running.
func (e *ExecConfig) clientCertificate(ctx context.Context, cluster func() (*execCluster, error)) (*tls.Certificate, error) {
	res, err := e.credential(ctx, cluster)
	if err != nil {
		return nil, err
	}
	if res.cert == nil {
		return &tls.Certificate{}, nil
	}
	return res.cert, nil
}

// ExecError reports an exec plugin that could not give a credential. It
// wraps ErrExecPlugin and the underlying error (an *exec.ExitError, or
// context.DeadlineExceeded for a plugin killed after Timeout). Stderr is
// the plugin's own explanation, cut at 4 KiB, with any credential the
// plugin printed replaced by "[redacted]"; stdout is never shown.
type ExecError struct {
	Command string // the plugin
	Reason  string // what went wrong, for example "failed"
	Stderr  string // bounded, redacted
	Err     error  // underlying cause, may be nil
}

// Error names the plugin, what happened, the cause and the plugin's stderr.
func (e *ExecError) Error() string {
	msg := fmt.Sprintf("rest: exec plugin %q %s", e.Command, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += fmt.Sprintf("; stderr: %s", s)
	}
	return msg
}

// Unwrap exposes ErrExecPlugin and the cause to errors.Is / errors.As.
func (e *ExecError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrExecPlugin}
	}
	return []error{ErrExecPlugin, e.Err}
}

// printable replaces control characters other than newline and tab, so
// that a plugin's output cannot drive the terminal that shows our error
// (client-go strips ANSI escapes from installHint for the same reason).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}

// cappedBuffer keeps the first limit bytes written and notes an overflow,
// so that a plugin cannot make us hold unbounded output. (The buffer is a
// field, not embedded: an embedded bytes.Buffer would lend its ReadFrom to
// io.Copy, which would then bypass Write and the limit.)
type cappedBuffer struct {
	buf      bytes.Buffer
	limit    int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); len(p) > room {
		b.overflow = true
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil // keep draining, so the plugin is not blocked on a full pipe
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *cappedBuffer) String() string { return b.buf.String() }
