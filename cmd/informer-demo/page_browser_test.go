//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/net/websocket"
)

// The live page is tested as a learner uses it: in a real browser. Headless
// Chromium loads the page, the test presses the "compact" button, and the page
// must show the recovery: a 410, a relist of pods, tombstones, and the
// reflector back in Watching. Chromium is driven over the DevTools protocol
// (a JSON-RPC over one websocket) with golang.org/x/net/websocket, which
// apimachinery already requires.

// chromiumFlags are the flags that run Chromium headless in a container,
// without reaching the network for updates or sync.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--remote-debugging-port=0", "--remote-allow-origins=" + devtoolsOrigin}

// devtoolsOrigin is the Origin the test's websocket sends; Chromium accepts
// DevTools connections only from origins it was told about.
const devtoolsOrigin = "http://localhost"

// findChromium returns Chromium's path, or skips the test when it is not
// installed and the run is not CI (.ci/run installs it and sets CI=true).
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("chromium is not installed (apt-get install -y chromium); under CI=true this test fails instead")
	}
	t.Fatal("CI is set but chromium is not installed: .ci/run installs it")
	return ""
}

func TestPageShowsRecoveryFromCompaction(t *testing.T) {
	chromium := findChromium(t)
	defer goleak.VerifyNone(t)

	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{pods: 300, services: 5, churn: 200, seed: 1, slowEvery: time.Millisecond, http: "127.0.0.1:0"}, &out)
	}()
	defer func() { cancel(); require.NoError(t, <-done) }()
	url := waitForPageURL(t, &out)

	b := startBrowser(t, chromium)
	defer b.close()
	b.call(t, "Page.navigate", map[string]any{"url": url})

	b.waitFor(t, "the page shows the pods reflector watching and the buttons",
		`document.querySelector('#state-pods')?.textContent === 'Watching' &&
		 !!document.querySelector('button[data-fault=compact]') &&
		 !document.querySelector('button[data-fault=compact]').disabled`)
	b.eval(t, `document.querySelector('button[data-fault=compact]').click(); true`)

	b.waitFor(t, "the page shows the fault, the 410, the relist and the tombstones",
		`!!document.querySelector('#timeline li[data-kind=fault]') &&
		 [...document.querySelectorAll('#timeline li[data-who=pods][data-kind=error]')].some(li => li.textContent.includes('Expired')) &&
		 !!document.querySelector('#timeline li[data-who=pods][data-kind=relist]') &&
		 !!document.querySelector('#timeline li[data-kind=tombstones]') &&
		 Number(document.querySelector('#relists').textContent) >= 1 &&
		 Number(document.querySelector('#tombstones').textContent) >= 3`)
	b.waitFor(t, "the pods reflector is back to watching, and its box says it relisted",
		`document.querySelector('#state-pods').textContent === 'Watching' &&
		 /relists [1-9]/.test(document.querySelector('[data-informer=pods]').textContent)`)
	b.waitFor(t, "the pods band shows the way out of Watching and back",
		`(() => { const s = [...document.querySelectorAll('#band-pods .seg')].map(e => e.dataset.state);
		          const out = s.findIndex(x => x === 'BackingOff' || x === 'Relisting');
		          return out > 0 && s.slice(0, out).includes('Watching') && s[s.length - 1] === 'Watching'; })()`)
}

var pageURL = regexp.MustCompile(`live page at (http://\S+)`)

func waitForPageURL(t *testing.T, out *syncBuffer) string {
	t.Helper()
	var url string
	require.Eventually(t, func() bool {
		m := pageURL.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 30*time.Second, 10*time.Millisecond, "the demo never printed its page's address: %s", out.String())
	return url
}

// browser is one headless Chromium and a DevTools connection to its page.
type browser struct {
	cmd  *exec.Cmd
	conn *websocket.Conn
	next int // the id of the next DevTools call
}

func startBrowser(t *testing.T, chromium string) *browser {
	t.Helper()
	profile := t.TempDir() // a fresh profile: no state from another run
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+profile, "about:blank")
	cmd := exec.Command(chromium, args...)
	// Its own process group, so that its helpers (renderer, zygote) can be
	// ended with it if it does not close by itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	b := &browser{cmd: cmd}
	// Chromium writes the port it chose, and its browser endpoint, here.
	var port string
	if !eventually(30*time.Second, func() bool {
		data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		port, _, _ = strings.Cut(string(data), "\n")
		return err == nil && port != ""
	}) {
		b.close()
		t.Fatal("chromium did not open its DevTools port")
	}
	ws, err := pageTarget(port)
	if err != nil {
		b.close()
		t.Fatal(err)
	}
	if b.conn, err = websocket.Dial(ws, "", devtoolsOrigin); err != nil {
		b.close()
		t.Fatal(err)
	}
	return b
}

// pageTarget returns the DevTools websocket of Chromium's first page.
func pageTarget(port string) (string, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var targets []struct{ Type, WebSocketDebuggerURL string }
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		return "", err
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			return tg.WebSocketDebuggerURL, nil
		}
	}
	return "", errors.New("chromium has no page target")
}

// close ends the Chromium this test started: it asks the browser to close
// (it then ends its helpers and stops writing to its profile, which the
// test's TempDir cleanup removes), and ends its process group if it has not
// exited within ten seconds.
func (b *browser) close() {
	exited := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(exited) }()
	if b.conn != nil {
		_ = b.conn.SetDeadline(time.Now().Add(5 * time.Second))
		_ = websocket.JSON.Send(b.conn, map[string]any{"id": 1 << 30, "method": "Browser.close"})
		_ = b.conn.Close()
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// call makes one DevTools call and returns its result. Chromium sends no
// events unless a domain is enabled, so the next message with our id is
// the answer; anything else is skipped.
func (b *browser) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	b.next++
	id := b.next
	require.NoError(t, b.conn.SetDeadline(time.Now().Add(30*time.Second)))
	require.NoError(t, websocket.JSON.Send(b.conn, map[string]any{"id": id, "method": method, "params": params}))
	for {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, websocket.JSON.Receive(b.conn, &msg), "DevTools %s", method)
		if msg.ID != id {
			continue
		}
		require.Nil(t, msg.Error, "DevTools %s", method)
		return msg.Result
	}
}

// eval runs a JavaScript expression in the page and returns its value.
func (b *browser) eval(t *testing.T, expr string) any {
	t.Helper()
	raw := b.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	require.Nil(t, r.ExceptionDetails, "evaluating %s", expr)
	return r.Result.Value
}

// waitFor evaluates cond in the page until it is true, with a deadline; on
// failure it shows what the page's timeline said.
func (b *browser) waitFor(t *testing.T, what, cond string) {
	t.Helper()
	if !eventually(60*time.Second, func() bool { return b.eval(t, "Boolean("+cond+")") == true }) {
		t.Fatalf("%s: never true.\npage timeline:\n%v\nstate bands: %v", what,
			b.eval(t, `document.querySelector('#timeline')?.innerText`),
			b.eval(t, `[...document.querySelectorAll('#bands .seg')].map(e => e.parentElement.id + ':' + e.dataset.state).join(' ')`))
	}
	t.Logf("%s: yes", what)
}

// eventually polls cond every 50ms until it is true or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
