package realapi_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed31a95821/informer/integration/realapi"
)

// requestTimeout bounds each request of these tests; the server is local.
const requestTimeout = 30 * time.Second

// TestServerAnswersWithVerifiedTLS starts the real server and checks what every later test
// relies on: TLS verifies against the CA from the cert dir, /readyz and /version answer, the
// version stamped at build time is the one served, and the token is what grants access.
func TestServerAnswersWithVerifiedTLS(t *testing.T) {
	c := realapi.Start(t)
	client := c.HTTPClient()

	status, body := do(t, client, http.MethodGet, c.URL+"/readyz", "")
	if status != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Fatalf("GET /readyz = %d %q, want 200 ok", status, body)
	}

	status, body = do(t, client, http.MethodGet, c.URL+"/version", "")
	var version struct{ Major, Minor, GitVersion, GoVersion string }
	if err := json.Unmarshal([]byte(body), &version); status != http.StatusOK || err != nil {
		t.Fatalf("GET /version = %d %q (%v)", status, body, err)
	}
	if version.GitVersion != "v1.37.2" || version.Major != "1" || version.Minor != "37" {
		t.Errorf("GET /version = %+v, want v1.37.2 (major 1, minor 37)", version)
	}
	t.Logf("/version: %s", body)

	// The bearer token, not anonymous access, is what may list namespaces.
	anonymous := &http.Client{Transport: caOnlyTransport(t, c.CAFile)}
	if status, _ := do(t, anonymous, http.MethodGet, c.URL+"/api/v1/namespaces", ""); status != http.StatusForbidden {
		t.Errorf("anonymous GET /api/v1/namespaces = %d, want 403", status)
	}
	if status, body := do(t, client, http.MethodGet, c.URL+"/api/v1/namespaces", ""); status != http.StatusOK {
		t.Errorf("GET /api/v1/namespaces with token = %d %q, want 200", status, body)
	}

	// Verification is really on: without the CA the handshake must fail.
	_, err := http.Get(c.URL + "/readyz")
	var unknownAuthority x509.UnknownAuthorityError
	if !errors.As(err, &unknownAuthority) {
		t.Errorf("GET without the CA: err = %v, want x509.UnknownAuthorityError", err)
	}

	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server: " + c.URL, "certificate-authority: " + c.CAFile, "token: " + c.Token} {
		if !strings.Contains(string(kubeconfig), want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, kubeconfig)
		}
	}
}

// TestEtcdCompactMakesOldWatchGone proves the way the integration tests force a 410: with the
// watch cache off, a watch from a resourceVersion works until etcd is compacted past it, and
// gets 410 Gone afterwards.
func TestEtcdCompactMakesOldWatchGone(t *testing.T) {
	c := realapi.StartWith(t, realapi.Options{DisableWatchCache: true})
	client := c.HTTPClient()
	const configmaps = "/api/v1/namespaces/default/configmaps"

	status, body := do(t, client, http.MethodGet, c.URL+configmaps, "")
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	if err := json.Unmarshal([]byte(body), &list); status != http.StatusOK || err != nil {
		t.Fatalf("list = %d %q (%v)", status, body, err)
	}
	oldRV := list.Metadata.ResourceVersion
	// Two writes after oldRV, so that compacting at the newest revision removes the revision
	// right after oldRV, which is where a watch from oldRV starts reading.
	for _, name := range []string{"a", "b"} {
		cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
		if status, body := do(t, client, http.MethodPost, c.URL+configmaps, cm); status != http.StatusCreated {
			t.Fatalf("create %s = %d %q", name, status, body)
		}
	}

	// Control: before compaction the same watch replays both creations.
	first := firstWatchEvent(t, client, c.URL+configmaps+"?watch=1&resourceVersion="+oldRV)
	if first.Type != "ADDED" || first.Code != 0 {
		t.Fatalf("watch from %s before compaction: first event %+v, want ADDED", oldRV, first)
	}

	rev := c.EtcdCompact(t)
	if old, _ := strconv.ParseInt(oldRV, 10, 64); rev < old+2 {
		t.Fatalf("compacted at revision %d, want at least %d (list RV %s plus two writes)", rev, old+2, oldRV)
	}
	if now := c.EtcdRevision(t); now < rev {
		t.Errorf("EtcdRevision after compaction = %d, want >= %d", now, rev)
	}

	gone := firstWatchEvent(t, client, c.URL+configmaps+"?watch=1&resourceVersion="+oldRV)
	if gone.Code != http.StatusGone {
		t.Fatalf("watch from %s after compaction at %d: %+v, want 410 Gone", oldRV, rev, gone)
	}
	t.Logf("after compaction at %d, watch from %s: %+v", rev, oldRV, gone)
}

// watchOutcome is the first thing a watch request produced: an HTTP error status, or the
// first event (with the Status code when the event is an ERROR).
type watchOutcome struct {
	HTTPStatus int
	Type       string
	Code       int
	Reason     string
}

func firstWatchEvent(t *testing.T, client *http.Client, url string) watchOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := watchOutcome{HTTPStatus: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		// A refused watch answers with a Status object instead of an event stream.
		var status struct {
			Code   int
			Reason string
		}
		if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
			t.Fatalf("watch %s: status %d, decoding Status: %v", url, resp.StatusCode, err)
		}
		out.Code, out.Reason = status.Code, status.Reason
		return out
	}
	var event struct {
		Type   string
		Object struct {
			Code   int
			Reason string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&event); err != nil {
		t.Fatalf("watch %s: decoding first event: %v", url, err)
	}
	out.Type = event.Type
	if event.Type == "ERROR" {
		out.Code, out.Reason = event.Object.Code, event.Object.Reason
	}
	return out
}

// caOnlyTransport trusts the cluster's CA but sends no credentials.
func caOnlyTransport(t *testing.T, caFile string) http.RoundTripper {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", caFile)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return transport
}

func do(t *testing.T, client *http.Client, method, url, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, string(data)
}
