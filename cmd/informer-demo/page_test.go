package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Each fault button leads the informers down the recovery path its label
// promises: watches resumed, never a relist, for a drop, a 429 burst and a
// restart. The page's endpoints answer in JSON, refuse unknown faults, and
// take faults only by POST.
func TestFaultButtonsRecoverWithoutRelist(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{pods: 100, services: 5, churn: 100, seed: 1, slowEvery: time.Millisecond, http: "127.0.0.1:0"}, &out)
	}()
	defer func() { cancel(); require.NoError(t, <-done) }()
	url := waitForPageURL(t, &out)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	state := func() snapshot {
		resp, err := client.Get(url + "api/state")
		require.NoError(t, err)
		defer resp.Body.Close()
		var s snapshot
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
		return s
	}
	post := func(name string) int {
		resp, err := client.Post(url+"api/fault/"+name, "application/json", nil)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Eventually(t, func() bool { return state().Synced }, 30*time.Second, 10*time.Millisecond)

	for _, tc := range []struct{ fault, errorKind string }{{"drop", ""}, {"throttle", "Throttled"}, {"restart", "ServerError"}} {
		before := state().Informers[0]
		require.Equal(t, http.StatusOK, post(tc.fault), tc.fault)
		require.Eventually(t, func() bool {
			now := state().Informers[0]
			return now.Watches > before.Watches && now.State == "Watching" &&
				(tc.errorKind == "" || now.Errors[tc.errorKind] > before.Errors[tc.errorKind])
		}, 30*time.Second, 10*time.Millisecond, "%s: the pods informer must reopen its watch", tc.fault)
		require.Zero(t, state().Informers[0].Relists, "%s: recovered without a relist", tc.fault)
		t.Logf("%s: recovered at %.1fs", tc.fault, state().Elapsed)
	}
	var noted []string
	for _, e := range state().Timeline {
		if e.Kind == "fault" {
			noted = append(noted, strings.SplitN(e.What, ":", 2)[0])
		}
	}
	require.Equal(t, []string{"drop watches", "429 burst", "restart (cut connections, 503s)"}, noted, "each fault is on the timeline")

	require.Equal(t, http.StatusNotFound, post("no-such-fault"))
	resp, err := client.Get(url + "api/fault/drop")
	require.NoError(t, err)
	resp.Body.Close()
	require.NotEqual(t, http.StatusOK, resp.StatusCode, "a GET must not inject a fault")
	faultsNoted := 0
	for _, e := range state().Timeline {
		if e.Kind == "fault" {
			faultsNoted++
		}
	}
	require.Equal(t, len(noted), faultsNoted, "neither the unknown fault nor the GET was injected")
}
