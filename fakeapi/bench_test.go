package fakeapi

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Run with, e.g.:
//
//	go test -run '^$' -bench . -benchtime 3x ./fakeapi/
//
// The pod count defaults small so that "go test -bench ." stays cheap;
// the 100k figures come from the Seed100k and List100k benchmarks.

func BenchmarkSeed100kPods(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		srv, err := NewServer(Options{HistoryLimit: -1})
		require.NoError(b, err)
		require.NoError(b, srv.SeedPods([]string{"a", "b", "c", "d"}, 100_000))
		srv.Close()
	}
}

// BenchmarkList100kPodsInPagesOf500 measures one full paged list over HTTP:
// 200 requests with limit=500 and continue tokens, decoded by the client.
func BenchmarkList100kPodsInPagesOf500(b *testing.B) {
	for _, mediaType := range []string{mediaJSON, mediaProtobuf} {
		b.Run(mediaType, func(b *testing.B) {
			srv, err := NewServer(Options{HistoryLimit: -1})
			require.NoError(b, err)
			defer srv.Close()
			require.NoError(b, srv.SeedPods([]string{"a", "b", "c", "d"}, 100_000))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := listAllPages(b, srv, mediaType, 500)
				if n != 100_000 {
					b.Fatalf("listed %d pods", n)
				}
			}
		})
	}
}

func listAllPages(b *testing.B, srv *Server, mediaType string, limit int) int {
	total, cont := 0, ""
	for {
		url := fmt.Sprintf("%s/api/v1/pods?limit=%d&continue=%s", srv.URL(), limit, cont)
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", mediaType)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(b, err)
		list := decodeJSON(b, data).(*corev1.PodList)
		total += len(list.Items)
		if list.Continue == "" {
			return total
		}
		cont = list.Continue
	}
}

// BenchmarkWatchEventsToOneClient measures events per second from writes
// through the log, encoding and HTTP, to one client decoding the stream.
func BenchmarkWatchEventsToOneClient(b *testing.B) {
	for _, mediaType := range []string{mediaJSON, mediaProtobuf} {
		b.Run(mediaType, func(b *testing.B) {
			srv, err := NewServer(Options{HistoryLimit: -1, CompactionWindow: -1})
			require.NoError(b, err)
			defer srv.Close()
			w := openWatch(b, srv.URL()+"/api/v1/pods?watch=true&resourceVersion=0", mediaType)
			defer w.Stop()
			b.ReportAllocs()
			b.ResetTimer()
			// The writer seeds in bulk so that the measured cost is the
			// watch path, not object construction.
			require.NoError(b, srv.SeedPods([]string{"a"}, b.N))
			for i := 0; i < b.N; i++ {
				ev := <-w.ResultChan()
				if ev.Type != watch.Added {
					b.Fatalf("event %d: %s", i, ev.Type)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
