package fakeapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// An HTTP DELETE of a pod happens in kube-apiserver's two steps: MODIFIED
// with the deletionTimestamp, then DELETED; the answer is the final state.
func TestHTTPPodDeleteIsGraceful(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	srv := startServer(t, Options{Now: func() time.Time { return now }})
	scheduled := pod("ns", "scheduled", nil)
	scheduled.Spec.NodeName = "node-1"
	for _, p := range []*corev1.Pod{pod("ns", "pending", nil), scheduled, pod("ns", "stale", nil)} {
		_, err := srv.Create(p) // RVs 1, 2, 3
		require.NoError(t, err)
	}
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=3", "")

	for _, tc := range []struct {
		name  string
		grace int64
	}{
		{"pending", 0},                       // never scheduled: no grace
		{"scheduled", defaultPodGracePeriod}, // the kubelet would have 30s
	} {
		code, body, _ := do(t, http.MethodDelete, podsURL(srv)+"/"+tc.name, "", "")
		require.Equal(t, http.StatusOK, code, "%s", body)
		answer := decodeJSON(t, body).(*corev1.Pod)

		marked := nextEvent(t, w)
		require.Equal(t, watch.Modified, marked.Type, tc.name)
		mp := marked.Object.(*corev1.Pod)
		require.Equal(t, now.Add(time.Duration(tc.grace)*time.Second), mp.DeletionTimestamp.Time.UTC(), tc.name)
		require.Equal(t, tc.grace, *mp.DeletionGracePeriodSeconds, tc.name)
		require.Equal(t, int64(2), mp.Generation, "marking a pod for deletion bumps its generation")

		gone := nextEvent(t, w)
		require.Equal(t, watch.Deleted, gone.Type, tc.name)
		require.Equal(t, answer.ResourceVersion, gone.Object.(*corev1.Pod).ResourceVersion, "the answer is the final state")
		require.NotNil(t, answer.DeletionTimestamp)
	}

	// A failed precondition changes nothing.
	code, body, _ := do(t, http.MethodDelete, podsURL(srv)+"/stale", mediaJSON, `{"preconditions":{"resourceVersion":"1"}}`)
	require.Equal(t, http.StatusConflict, code, "%s", body)
	code, body, _ = do(t, http.MethodDelete, podsURL(srv)+"/stale?gracePeriodSeconds=0", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, "MODIFIED stale 8", eventSummary(nextEvent(t, w)), "no write happened for the refused delete")
	require.Equal(t, "DELETED stale 9", eventSummary(nextEvent(t, w)))

	code, body, _ = do(t, http.MethodDelete, podsURL(srv)+"/x?gracePeriodSeconds=soon", "", "")
	require.Equal(t, http.StatusBadRequest, code, "%s", body)
}

func TestPodGracePeriod(t *testing.T) {
	ten, zero := int64(10), int64(0)
	running := pod("ns", "p", nil)
	running.Spec.NodeName = "n"
	custom := running.DeepCopy()
	custom.Spec.TerminationGracePeriodSeconds = &ten
	done := running.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	require.Equal(t, int64(30), podGracePeriod(running, nil))
	require.Equal(t, int64(10), podGracePeriod(custom, nil))
	require.Equal(t, int64(0), podGracePeriod(custom, &zero))
	require.Equal(t, int64(10), podGracePeriod(running, &ten))
	require.Equal(t, int64(0), podGracePeriod(done, &ten), "a finished pod goes at once")
	require.Equal(t, int64(0), podGracePeriod(pod("ns", "p", nil), &ten), "so does one never scheduled")
}
