package fakeapi

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Every watch of a resource gets the same event as the same bytes: each
// event is encoded once per wire format, not once per watch, so a write
// costs the same under 40 watches as under one (here 9 events reach 20
// JSON and 20 protobuf watches: 18 encodings, not 360). A watch whose
// frames differ (a label selector that turns an update into DELETED) gets
// frames of its own kind, still shared with its like.
func TestWatchEncodesEachEventOnce(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	from := formatRV(srv.ResourceVersion())
	var watches []watch.Interface
	for i := range 40 {
		accept := mediaJSON
		if i%2 == 1 {
			accept = mediaProtobuf
		}
		watches = append(watches, openWatch(t, podsURL(srv)+"?watch=true&resourceVersion="+from, accept))
	}
	var want []string
	for i := range 3 {
		name := fmt.Sprintf("p%d", i)
		created, err := srv.Create(pod("ns", name, map[string]string{"app": "web"}))
		require.NoError(t, err)
		want = append(want, "ADDED "+name+" "+rvOf(t, created))
		updated, err := srv.Update(pod("ns", name, map[string]string{"app": "db"}))
		require.NoError(t, err)
		want = append(want, "MODIFIED "+name+" "+rvOf(t, updated))
		require.NoError(t, srv.Delete(pod("ns", name, nil)))
		want = append(want, fmt.Sprintf("DELETED %s %d", name, srv.ResourceVersion()))
	}
	var wg sync.WaitGroup
	got := make([][]string, len(watches))
	for i, w := range watches {
		wg.Go(func() {
			for range want {
				got[i] = append(got[i], eventSummary(nextEvent(t, w)))
			}
		})
	}
	wg.Wait()
	for i := range watches {
		require.Equal(t, want, got[i], "watch %d", i)
	}
	require.Equal(t, int64(2*len(want)), srv.frames.encodings.Load(), "one encoding per event and wire format")

	// Two watches with a selector see the update as a DELETED of the
	// previous state: one more frame, shared by both.
	before := srv.frames.encodings.Load()
	var selected []watch.Interface
	for range 2 {
		selected = append(selected, openWatch(t, podsURL(srv)+"?watch=true&labelSelector=app%3Dweb&resourceVersion="+from, mediaJSON))
	}
	for _, w := range selected {
		for i := range 3 {
			name := fmt.Sprintf("p%d", i)
			added := eventSummary(nextEvent(t, w))
			require.True(t, strings.HasPrefix(added, "ADDED "+name+" "), added)
			ev := nextEvent(t, w)
			require.Equal(t, watch.Deleted, ev.Type)
			require.Equal(t, "web", ev.Object.(*corev1.Pod).Labels["app"], "the state before the update")
		}
	}
	require.Equal(t, before+3, srv.frames.encodings.Load(), "the ADDED frames were shared already; each DELETED is encoded once")
}

// The shared frames are bounded in number and in bytes: the oldest are
// forgotten, and a frame asked for again is encoded again.
func TestSharedFramesAreBounded(t *testing.T) {
	var c frameCache
	frame := func(rv uint64, size int) []byte {
		b, err := c.frame(frameKey{rv: rv, mediaType: mediaJSON}, func() ([]byte, error) {
			return bytes.Repeat([]byte{'x'}, size), nil
		})
		require.NoError(t, err)
		return b
	}
	for rv := range uint64(2 * maxSharedFrames) {
		frame(rv, 10)
	}
	require.Len(t, c.entries, maxSharedFrames)
	require.Equal(t, 10*maxSharedFrames, c.bytes)
	frame(2*maxSharedFrames-1, 10)
	require.Equal(t, int64(2*maxSharedFrames), c.encodings.Load(), "a recent frame is shared")
	frame(0, 10)
	require.Equal(t, int64(2*maxSharedFrames+1), c.encodings.Load(), "a forgotten frame is encoded again")

	for rv := range uint64(8) {
		frame(1e6+rv, 1<<20)
	}
	require.LessOrEqual(t, c.bytes, maxSharedFrameBytes)
	require.Len(t, frame(1e6+7, 1<<20), 1<<20)

	_, err := c.frame(frameKey{rv: 1}, func() ([]byte, error) { return nil, fmt.Errorf("no") })
	require.Error(t, err, "a failed encoding is reported to every watch that shares it")
}
