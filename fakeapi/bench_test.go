package fakeapi

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
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

// BenchmarkWatchEventsToOneClient measures events per second from the
// event log, through encoding and HTTP, to one client. The writes happen
// before the timer starts and the watch resumes from the RV before them, so
// the figure is the watch path alone. "decoded" includes the client
// decoding every event with apimachinery's decoders; "raw" only splits the
// frames, which shows what the server side can push.
func BenchmarkWatchEventsToOneClient(b *testing.B) {
	for _, mediaType := range []string{mediaJSON, mediaProtobuf} {
		for _, decode := range []bool{true, false} {
			name := mediaType + "/raw"
			if decode {
				name = mediaType + "/decoded"
			}
			b.Run(name, func(b *testing.B) { benchmarkWatch(b, mediaType, decode) })
		}
	}
}

func benchmarkWatch(b *testing.B, mediaType string, decode bool) {
	srv, err := NewServer(Options{HistoryLimit: -1, CompactionWindow: -1})
	require.NoError(b, err)
	defer srv.Close()
	from := srv.ResourceVersion()
	require.NoError(b, srv.SeedPods([]string{"a"}, b.N))
	url := fmt.Sprintf("%s/api/v1/pods?watch=true&resourceVersion=%d", srv.URL(), from)
	b.ReportAllocs()
	b.ResetTimer()
	if decode {
		w := openWatch(b, url, mediaType)
		for i := 0; i < b.N; i++ {
			if ev := <-w.ResultChan(); ev.Type != watch.Added {
				b.Fatalf("event %d: %s", i, ev.Type)
			}
		}
		w.Stop()
	} else {
		countRawFrames(b, url, mediaType, b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// countRawFrames reads n frames of a watch without decoding them.
func countRawFrames(b *testing.B, url, mediaType string, n int) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", mediaType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 1<<16)
	var size [4]byte
	for i := 0; i < n; i++ {
		if mediaType == mediaProtobuf {
			_, err = io.ReadFull(r, size[:])
			if err == nil {
				_, err = r.Discard(int(binary.BigEndian.Uint32(size[:])))
			}
		} else {
			_, err = r.ReadSlice('\n')
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
		}
		require.NoError(b, err)
	}
}

// BenchmarkWatchFanOut measures one write reaching 1,000 idle watches of
// its resource (an op is one pod update and its 1,000 frames read), in
// each wire format: each event is encoded once per format and its bytes
// shared by every watch (watchframes.go), as kube-apiserver's watch cache
// does, so an op costs the writes of the frames, not 1,000 encodings.
func BenchmarkWatchFanOut(b *testing.B) {
	for _, mediaType := range []string{mediaJSON, mediaProtobuf} {
		b.Run(mediaType, func(b *testing.B) { benchmarkFanOut(b, mediaType, 1000) })
	}
}

func benchmarkFanOut(b *testing.B, mediaType string, watches int) {
	srv, err := NewServer(Options{HistoryLimit: -1})
	require.NoError(b, err)
	defer srv.Close()
	createNamespace(b, srv, "ns")
	p, err := srv.Create(pod("ns", "p", nil))
	require.NoError(b, err)
	url := fmt.Sprintf("%s/api/v1/namespaces/ns/pods?watch=true&resourceVersion=%d", srv.URL(), srv.ResourceVersion())
	frames := make(chan struct{}, watches)
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	defer readers.Wait()
	defer cancel()
	for range watches {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", mediaType)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer resp.Body.Close()
			readFrames(bufio.NewReader(resp.Body), mediaType, frames)
		}()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p.(*corev1.Pod).Labels = map[string]string{"i": strconv.Itoa(i)}
		p, err = srv.Update(p)
		require.NoError(b, err)
		for range watches {
			<-frames
		}
	}
}

// readFrames reads raw watch frames until the stream ends, sending a token
// for each.
func readFrames(r *bufio.Reader, mediaType string, frames chan<- struct{}) {
	var size [4]byte
	for {
		var err error
		if mediaType == mediaProtobuf {
			if _, err = io.ReadFull(r, size[:]); err == nil {
				_, err = r.Discard(int(binary.BigEndian.Uint32(size[:])))
			}
		} else {
			_, err = r.ReadSlice('\n')
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
		}
		if err != nil {
			return
		}
		frames <- struct{}{}
	}
}
