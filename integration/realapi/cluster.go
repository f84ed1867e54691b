package realapi

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ScriptEnv names the environment variable that overrides where scripts/real-apiserver.sh is.
// Without it the script is found by walking up from the working directory, which is the
// package directory under go test.
const ScriptEnv = "REALAPI_SCRIPT"

const scriptRelPath = "scripts/real-apiserver.sh"

// Options configures a cluster. The zero value starts the server as a cluster would run it.
type Options struct {
	// DisableWatchCache starts kube-apiserver with --watch-cache=false. Every watch then reads
	// from etcd, so a watch from a compacted resourceVersion reliably gets 410 Gone after
	// EtcdCompact. With the cache on, the server answers from memory and its own window.
	DisableWatchCache bool

	// Dir is where the cluster keeps its data, certificates, logs, kubeconfig and PID files.
	// Empty means a new temporary directory, removed by Stop.
	Dir string

	// Log receives the script's progress messages (build and start). Nil discards them; they
	// are still quoted in the error when the script fails.
	Log io.Writer
}

// Cluster is a running kube-apiserver and etcd on loopback ports. Its fields are read-only
// after Launch returns, so it is safe for concurrent use; Stop must be called once.
type Cluster struct {
	// URL is the API server's base URL, https://127.0.0.1:<port>.
	URL string
	// Token is a bearer token for a user in group system:masters (cluster-admin under RBAC).
	Token string
	// CAFile is the PEM file of the CA that signed the server's self-signed serving
	// certificate. Trust it; do not turn verification off.
	CAFile string
	// CertDir is kube-apiserver's --cert-dir, where it wrote apiserver.crt and apiserver.key.
	CertDir string
	// Kubeconfig is the path of a kubeconfig with URL, CAFile and Token.
	Kubeconfig string
	// EtcdURL is etcd's client URL, http://127.0.0.1:<port>, which also serves the gRPC
	// gateway's JSON API (/v3/kv/range, /v3/kv/compaction, ...).
	EtcdURL string
	// Dir holds everything the cluster wrote, including etcd.log and kube-apiserver.log.
	Dir string
	// WatchCache reports whether kube-apiserver runs with its watch cache.
	WatchCache bool
	// ReadyAfter is how long the start took, from launching etcd until /readyz answered.
	ReadyAfter time.Duration

	script     string
	removeDir  bool
	httpClient *http.Client
}

// Launch builds the servers if they are not cached, starts them and waits until the API
// server is ready. It is the form for TestMain, where there is no testing.TB; tests use Start.
// The caller must call Stop.
func Launch(ctx context.Context, opts Options) (*Cluster, error) {
	script, err := findScript()
	if err != nil {
		return nil, err
	}
	if err := build(ctx, script, opts.Log); err != nil {
		return nil, err
	}
	c := &Cluster{script: script, Dir: opts.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "realapi-"); err != nil {
			return nil, fmt.Errorf("realapi: %w", err)
		}
		c.removeDir = true
	}
	env := []string{
		"REALAPI_WATCH_CACHE=" + strconv.FormatBool(!opts.DisableWatchCache),
		// The script's watchdog stops the servers if this process dies without calling Stop.
		"REALAPI_PARENT_PID=" + strconv.Itoa(os.Getpid()),
	}
	if err := runScript(ctx, script, opts.Log, env, "start", c.Dir); err != nil {
		// A start that failed half-way may have left etcd running.
		return nil, errors.Join(fmt.Errorf("realapi: starting servers: %w", err), c.Stop())
	}
	if err := c.load(); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// Build builds kube-apiserver and etcd unless their binaries are already
// cached, writing the script's progress to log (nil discards it). Launch does
// this itself; calling it first matters only to callers that launch several
// clusters at once, so that a cold build runs once instead of racing itself.
func Build(ctx context.Context, log io.Writer) error {
	script, err := findScript()
	if err != nil {
		return err
	}
	return build(ctx, script, log)
}

func build(ctx context.Context, script string, log io.Writer) error {
	if err := runScript(ctx, script, log, nil, "build"); err != nil {
		return fmt.Errorf("realapi: building kube-apiserver and etcd: %w", err)
	}
	return nil
}

// Stop stops kube-apiserver and then etcd by their PIDs and waits until both have exited.
// It removes Dir if Launch created it.
func (c *Cluster) Stop() error {
	err := runScript(context.Background(), c.script, nil, nil, "stop", c.Dir)
	if err != nil {
		err = fmt.Errorf("realapi: stopping servers: %w", err)
	}
	if c.removeDir {
		err = errors.Join(err, os.RemoveAll(c.Dir))
	}
	return err
}

// KillAPIServer kills kube-apiserver with SIGKILL, as a crash or the OOM killer would, and
// returns once it is gone. etcd keeps running, with everything the server wrote. Clients see
// their connections reset and new ones refused until StartAPIServer.
func (c *Cluster) KillAPIServer(ctx context.Context) error {
	if err := runScript(ctx, c.script, nil, nil, "kill-apiserver", c.Dir); err != nil {
		return fmt.Errorf("realapi: killing kube-apiserver: %w", err)
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after KillAPIServer: on the same port, against the
// same etcd, with the same certificates and token, so that clients reconnect to what looks like
// the same server after a restart. It returns once /readyz answers.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if err := runScript(ctx, c.script, nil, nil, "start-apiserver", c.Dir); err != nil {
		return fmt.Errorf("realapi: restarting kube-apiserver: %w", err)
	}
	return nil
}

// HTTPClient returns a client that verifies the server against CAFile and sends Token.
// It is for test setup (creating, changing and deleting objects) with nothing but net/http.
func (c *Cluster) HTTPClient() *http.Client { return c.httpClient }

// load reads the env file that "start" wrote and prepares the HTTP client.
func (c *Cluster) load() error {
	env, err := readEnvFile(filepath.Join(c.Dir, "env"))
	if err != nil {
		return fmt.Errorf("realapi: %w", err)
	}
	c.URL, c.Token, c.CAFile = env["REALAPI_URL"], env["REALAPI_TOKEN"], env["REALAPI_CA_FILE"]
	c.CertDir, c.Kubeconfig, c.EtcdURL = env["REALAPI_CERT_DIR"], env["REALAPI_KUBECONFIG"], env["REALAPI_ETCD_URL"]
	c.WatchCache = env["REALAPI_WATCH_CACHE"] != "false"
	ms, _ := strconv.Atoi(env["REALAPI_READY_MS"])
	c.ReadyAfter = time.Duration(ms) * time.Millisecond
	if c.URL == "" || c.Token == "" || c.CAFile == "" || c.EtcdURL == "" {
		return fmt.Errorf("realapi: env file in %s lacks the URL, token, CA or etcd URL", c.Dir)
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return fmt.Errorf("realapi: reading CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("realapi: no certificate in %s", c.CAFile)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	c.httpClient = &http.Client{Transport: &bearerTransport{token: c.Token, next: transport}}
	return nil
}

// bearerTransport adds the Authorization header to every request. It is safe for concurrent
// use because it keeps no state besides the immutable token.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A RoundTripper must not modify the caller's request, so the header goes on a clone.
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

// readEnvFile parses the KEY=VALUE lines the script writes. Values never contain newlines.
func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			env[k] = v
		}
	}
	return env, sc.Err()
}

// findScript locates scripts/real-apiserver.sh: from ScriptEnv, or by walking up from the
// working directory to the repository root.
func findScript() (string, error) {
	if p := os.Getenv(ScriptEnv); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("realapi: %w", err)
	}
	for {
		p := filepath.Join(dir, scriptRelPath)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("realapi: %s not found above the working directory; set %s", scriptRelPath, ScriptEnv)
		}
		dir = parent
	}
}

// runScript runs one subcommand of the script. Its output goes to log and, on failure, the
// last lines are quoted in the error so that the reason is never lost.
func runScript(ctx context.Context, script string, log io.Writer, env []string, args ...string) error {
	var tail bytes.Buffer
	out := io.Writer(&tail)
	if log != nil {
		out = io.MultiWriter(log, &tail)
	}
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	// The script starts daemons that keep the pipes' write ends only if they inherit them;
	// they do not (their output goes to log files), so Wait returns when the script exits.
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", script, args[0], err, lastLines(tail.String(), 40))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
