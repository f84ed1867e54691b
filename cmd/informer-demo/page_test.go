package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// pageClient talks to one running demo's page.
type pageClient struct {
	t      *testing.T
	url    string
	client *http.Client
}

// startDemoWithPage runs the demo with its page until the test ends.
func startDemoWithPage(t *testing.T) *pageClient {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{pods: 100, services: 5, churn: 100, seed: 1, slowEvery: time.Millisecond, http: "127.0.0.1:0"}, &out)
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	p := &pageClient{t: t, url: waitForPageURL(t, &out),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	require.Eventually(t, func() bool { return p.state().Synced }, 30*time.Second, 10*time.Millisecond)
	return p
}

func (p *pageClient) state() snapshot {
	resp, err := p.client.Get(p.url + "api/state")
	require.NoError(p.t, err)
	defer resp.Body.Close()
	var s snapshot
	require.NoError(p.t, json.NewDecoder(resp.Body).Decode(&s))
	return s
}

func (p *pageClient) post(name string) int {
	resp, err := p.client.Post(p.url+"api/fault/"+name, "application/json", nil)
	require.NoError(p.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// notedFaults are the labels of the faults on the page's timeline.
func (p *pageClient) notedFaults() []string {
	var noted []string
	for _, e := range p.state().Timeline {
		if e.Kind == "fault" {
			noted = append(noted, strings.SplitN(e.What, ":", 2)[0])
		}
	}
	return noted
}

// errorsOf counts one kind of error over every informer.
func errorsOf(s snapshot, kind string) (n int64) {
	for _, inf := range s.Informers {
		n += inf.Errors[kind]
	}
	return n
}

// Each fault button leads the informers down the recovery path its label
// promises: watches resumed, never a relist, for a drop, a 429 burst and a
// restart. Each runs on a demo of its own, so that one fault's backoffs do
// not lengthen the next one's.
func TestFaultButtonsRecoverWithoutRelist(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct{ fault, label, errorKind string }{
		{"drop", "drop watches", ""},
		{"throttle", "429 burst", "Throttled"},
		{"restart", "restart (cut connections, 503s)", "ServerError"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			p := startDemoWithPage(t)
			before := p.state()
			require.Equal(t, http.StatusOK, p.post(tc.fault))
			// The failures go to whichever requests come first: count them
			// over both informers, and require both to watch again.
			require.Eventually(t, func() bool {
				now := p.state()
				for i, inf := range now.Informers {
					if inf.Watches <= before.Informers[i].Watches || inf.State != "Watching" {
						return false
					}
				}
				return tc.errorKind == "" || errorsOf(now, tc.errorKind) > errorsOf(before, tc.errorKind)
			}, 60*time.Second, 10*time.Millisecond, "both informers must reopen their watches")
			for _, inf := range p.state().Informers {
				require.Zero(t, inf.Relists, "%s recovered without a relist", inf.Name)
			}
			require.Equal(t, []string{tc.label}, p.notedFaults(), "the fault is on the timeline")
		})
	}
}

// The page's endpoints refuse unknown faults, take faults only by a JSON
// POST, and not from another site's page.
func TestFaultEndpointRefusesWhatIsNotAFault(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first: runs after the demo's cleanup
	p := startDemoWithPage(t)
	require.Equal(t, http.StatusNotFound, p.post("no-such-fault"))
	resp, err := p.client.Get(p.url + "api/fault/drop")
	require.NoError(t, err)
	resp.Body.Close()
	require.NotEqual(t, http.StatusOK, resp.StatusCode, "a GET must not inject a fault")
	for name, header := range map[string]http.Header{
		"a form post":                   {"Content-Type": {"application/x-www-form-urlencoded"}},
		"a JSON post from another site": {"Content-Type": {"application/json"}, "Origin": {"http://elsewhere.example"}},
	} {
		req, err := http.NewRequest(http.MethodPost, p.url+"api/fault/drop", nil)
		require.NoError(t, err)
		req.Header = header
		resp, err := p.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, name)
	}
	require.Empty(t, p.notedFaults(), "neither the unknown fault, the GET nor the foreign posts were injected")
}

// Against a real cluster the demo is read-only: a fault request is refused
// with errNoFaults (409 on the page), and nothing is noted.
func TestFaultsNeedTheEmbeddedServer(t *testing.T) {
	f := newFaultInjector(nil, nil)
	require.ErrorIs(t, f.inject("drop"), errNoFaults)
}

// A page addressed by a name other than localhost is refused: a site that
// rebinds its own name to 127.0.0.1 must not reach the fault buttons.
func TestPageRefusesRebindingHosts(t *testing.T) {
	h := addressedByIP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	for host, want := range map[string]int{
		"127.0.0.1:8081": http.StatusOK, "localhost:8081": http.StatusOK, "[::1]:8081": http.StatusOK,
		"evil.example:8081": http.StatusForbidden, "evil.example": http.StatusForbidden,
	} {
		r := httptest.NewRequest(http.MethodPost, "/api/fault/drop", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, want, w.Code, host)
	}
}
