package fakeapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func seedNamed(t *testing.T, srv *Server, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := srv.Create(pod(ns, n, map[string]string{"name": n}))
		require.NoError(t, err)
	}
}

func listPods(t *testing.T, srv *Server, query string) (*corev1.PodList, int, []byte) {
	t.Helper()
	code, body, _ := do(t, http.MethodGet, srv.URL()+"/api/v1/pods?"+query, "", "")
	if code != http.StatusOK {
		return nil, code, body
	}
	return decodeJSON(t, body).(*corev1.PodList), code, body
}

func podNames(list *corev1.PodList) []string {
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	return out
}

func TestListCarriesResourceVersionAndStripsItemTypes(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b")
	list, _, body := listPods(t, srv, "")
	require.Equal(t, "2", list.ResourceVersion)
	require.Equal(t, []string{"a", "b"}, podNames(list))
	require.NotContains(t, string(body), `"kind":"Pod"`, "list items carry no kind, as on a real server")
}

func TestListResourceVersionSemantics(t *testing.T) {
	srv := startServer(t, Options{CompactionWindow: -1})
	seedNamed(t, srv, "ns", "a", "b", "c") // RVs 1..3
	_, err := srv.Update(pod("ns", "a", map[string]string{"v": "2"}))
	require.NoError(t, err) // RV 4
	cases := []struct {
		query string
		rv    string
		names []string
	}{
		{"", "4", []string{"a", "b", "c"}},
		{"resourceVersion=0", "4", []string{"a", "b", "c"}},
		{"resourceVersion=2", "4", []string{"a", "b", "c"}},
		{"resourceVersion=2&resourceVersionMatch=NotOlderThan", "4", []string{"a", "b", "c"}},
		{"resourceVersion=2&resourceVersionMatch=Exact", "2", []string{"a", "b"}},
		{"resourceVersion=2&limit=10", "2", []string{"a", "b"}}, // legacy: limit makes it exact
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			list, code, body := listPods(t, srv, tc.query)
			require.Equal(t, http.StatusOK, code, "%s", body)
			require.Equal(t, tc.rv, list.ResourceVersion)
			require.Equal(t, tc.names, podNames(list))
		})
	}
}

func TestListTooLargeResourceVersion(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	for _, q := range []string{"resourceVersion=5", "resourceVersion=5&resourceVersionMatch=Exact"} {
		_, code, body := listPods(t, srv, q)
		require.Equal(t, http.StatusGatewayTimeout, code)
		st := decodeStatus(t, body)
		require.Equal(t, metav1.StatusReasonTimeout, st.Reason)
		require.Equal(t, "Timeout: Too large resource version: 5, current: 1", st.Message)
		require.Len(t, st.Details.Causes, 1)
		require.Equal(t, metav1.CauseTypeResourceVersionTooLarge, st.Details.Causes[0].Type)
		require.Equal(t, "Too large resource version", st.Details.Causes[0].Message)
		require.Equal(t, int32(1), st.Details.RetryAfterSeconds)
	}
}

func TestListExactCompactedIsExpired(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b")
	srv.Compact()
	_, code, body := listPods(t, srv, "resourceVersion=1&resourceVersionMatch=Exact")
	require.Equal(t, http.StatusGone, code)
	require.Equal(t, metav1.StatusReasonExpired, decodeStatus(t, body).Reason)
}

func TestListPagingWithContinue(t *testing.T) {
	srv := startServer(t, Options{})
	for i := 0; i < 7; i++ {
		seedNamed(t, srv, "ns", fmt.Sprintf("p%d", i))
	}
	var got []string
	query := "limit=3"
	pages := 0
	for {
		list, code, body := listPods(t, srv, query)
		require.Equal(t, http.StatusOK, code, "%s", body)
		require.Equal(t, "7", list.ResourceVersion, "every page shows the first page's snapshot")
		got = append(got, podNames(list)...)
		pages++
		if pages == 1 {
			require.NotNil(t, list.RemainingItemCount)
			require.Equal(t, int64(4), *list.RemainingItemCount)
			// A write between pages is invisible to the rest of the list.
			seedNamed(t, srv, "ns", "p3a")
		}
		if list.Continue == "" {
			break
		}
		query = "limit=3&continue=" + list.Continue
	}
	require.Equal(t, 3, pages)
	require.Equal(t, []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6"}, got)
}

func TestListContinueCompactedIsExpiredWithFreshToken(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b", "c")
	first, _, _ := listPods(t, srv, "limit=1")
	require.NotEmpty(t, first.Continue)
	seedNamed(t, srv, "ns", "d")
	srv.Compact()

	_, code, body := listPods(t, srv, "limit=1&continue="+first.Continue)
	require.Equal(t, http.StatusGone, code)
	st := decodeStatus(t, body)
	require.Equal(t, metav1.StatusReasonExpired, st.Reason)
	require.Contains(t, st.Message, "The provided continue parameter is too old")
	require.NotEmpty(t, st.ListMeta.Continue, "the 410 carries a token to finish inconsistently")

	rest, code, body := listPods(t, srv, "continue="+st.ListMeta.Continue)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, []string{"b", "c", "d"}, podNames(rest), "the fresh token continues at the latest state")
}

func TestListSelectors(t *testing.T) {
	srv := startServer(t, Options{})
	for i, phase := range []corev1.PodPhase{corev1.PodRunning, corev1.PodPending, corev1.PodRunning} {
		p := pod("ns", fmt.Sprintf("p%d", i), map[string]string{"tier": []string{"web", "db", "db"}[i]})
		p.Spec.NodeName = fmt.Sprintf("node-%d", i%2)
		p.Status.Phase = phase
		_, err := srv.Create(p)
		require.NoError(t, err)
	}
	seedNamed(t, srv, "other", "p9")
	cases := map[string][]string{
		"labelSelector=tier%3Ddb":                                      {"p1", "p2"},
		"labelSelector=tier+in+(web),tier!%3Ddb":                       {"p0"},
		"fieldSelector=spec.nodeName%3Dnode-0":                         {"p0", "p2"},
		"fieldSelector=status.phase%3DRunning,metadata.name!%3Dp0":     {"p2"},
		"fieldSelector=metadata.namespace%3Dother":                     {"p9"},
		"labelSelector=tier%3Ddb&fieldSelector=status.phase%3DPending": {"p1"},
		"labelSelector=tier%3Ddb&limit=1":                              {"p1"},
	}
	for q, want := range cases {
		t.Run(q, func(t *testing.T) {
			list, code, body := listPods(t, srv, q)
			require.Equal(t, http.StatusOK, code, "%s", body)
			require.Equal(t, want, podNames(list))
		})
	}
	code, body, _ := do(t, http.MethodGet, srv.URL()+"/api/v1/namespaces/other/pods", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"p9"}, podNames(decodeJSON(t, body).(*corev1.PodList)))
}
