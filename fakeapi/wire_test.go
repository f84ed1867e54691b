package fakeapi

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// These tests look at raw bytes, to pin the framing clients rely on.

func TestWatchJSONWireFormat(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	resp, err := http.Get(podsURL(srv) + "?watch=true&resourceVersion=0&timeoutSeconds=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Equal(t, []string{"chunked"}, resp.TransferEncoding)

	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"`), line)
}

func TestWatchProtobufWireFormat(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	resp := watchProtobuf(t, srv)
	require.Equal(t, "application/vnd.kubernetes.protobuf;stream=watch", resp.Header.Get("Content-Type"))

	// A frame is a 4-byte big-endian length, then a raw (unenveloped)
	// protobuf WatchEvent whose object is an enveloped ("k8s\x00") Pod.
	ev := readProtobufFrame(t, resp.Body)
	require.Equal(t, "ADDED", ev.Type)
	require.True(t, strings.HasPrefix(string(ev.Object.Raw), "k8s\x00"), "embedded object has the protobuf envelope")
	obj := decodeJSON(t, ev.Object.Raw) // the universal deserializer also reads protobuf
	require.Equal(t, "a", obj.(*corev1.Pod).Name)
}

// watchProtobuf opens a protobuf watch of namespace ns's pods from
// resourceVersion 0, for a second; the test closes its body at its end.
func watchProtobuf(t *testing.T, srv *Server) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, podsURL(srv)+"?watch=true&resourceVersion=0&timeoutSeconds=1", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", mediaProtobuf)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// readProtobufFrame reads one frame of a protobuf watch: a 4-byte
// big-endian length, then a raw (unenveloped) WatchEvent.
func readProtobufFrame(t *testing.T, r io.Reader) metav1.WatchEvent {
	t.Helper()
	var size uint32
	require.NoError(t, binary.Read(r, binary.BigEndian, &size))
	frame := make([]byte, size)
	_, err := io.ReadFull(r, frame)
	require.NoError(t, err)
	var ev metav1.WatchEvent
	require.NoError(t, ev.Unmarshal(frame))
	return ev
}

// The initial events of a watch are encoded one after the other into one
// reused buffer (watchAllocator): each frame must still carry its own
// object whole, not the tail of a larger one encoded before it.
func TestWatchProtobufInitialEventsOfMixedSizes(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	sizes := []int{4000, 10, 9000, 0, 200}
	for i, n := range sizes {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprint("p", i),
			Annotations: map[string]string{"pad": strings.Repeat("x", n)}}}
		_, err := srv.Create(p)
		require.NoError(t, err)
	}
	resp := watchProtobuf(t, srv)
	got := map[string]int{}
	for range sizes {
		ev := readProtobufFrame(t, resp.Body)
		require.Equal(t, "ADDED", ev.Type)
		p := decodeJSON(t, ev.Object.Raw).(*corev1.Pod)
		require.Equal(t, strings.Repeat("x", len(p.Annotations["pad"])), p.Annotations["pad"])
		got[p.Name] = len(p.Annotations["pad"])
	}
	for i, n := range sizes {
		require.Equal(t, n, got[fmt.Sprint("p", i)])
	}
}
