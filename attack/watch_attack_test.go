package attack_test

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

// Attacks through the watch stream.

// podsGR names pods in Status errors.
var podsGR = schema.GroupResource{Resource: "pods"}

// listOne answers a list with one pod, "a", at RV 1.
func listOne(a *attack, w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, podList("1", "", a.sentPod("a")))
}

// Item 1: every watch ends cleanly right after one event. Without a
// minimum watch life the reflector re-watched at once, thousands of times
// a second.
func TestAttackShortWatches(t *testing.T) {
	var rv atomic.Int64
	rv.Store(1)
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			listOne(a, w)
			return
		}
		startStream(w)
		p := a.sentPod("b")
		p.ResourceVersion = fmt.Sprint(rv.Add(1))
		writeEvent(w, "ADDED", p) // and end the watch at once
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.start()
	a.waitSynced()
	a.waitErr(reflector.KindShortWatch, nil) // KindShortWatch has one cause: a watch closed too soon
	a.observe(2 * time.Second)
	// Backoff from 800ms, doubling: a handful of watches in the window.
	a.stop(bounds{requests: 20, heap: 16 << 20})
}

// Item 3: a WatchList that streams one object again and again and never
// sends its initial-events-end bookmark. The initial set is folded by key
// (one entry) and capped; past the cap the reflector lists instead.
func TestAttackWatchListWithoutBookmark(t *testing.T) {
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		switch {
		case isWatchList(r):
			startStream(w)
			for i := 2; ; i++ {
				p := a.sentPod("a")
				p.ResourceVersion = fmt.Sprint(i)
				if !writeEvent(w, "ADDED", p) {
					return
				}
			}
		case isWatch(r):
			holdOpen(w, r)
		default:
			listOne(a, w)
		}
	})
	a.opts.Reflector.MaxListItems = 1000
	a.start()
	a.waitErr(reflector.KindDecode, reflector.ErrListTooLarge)
	a.waitSynced()
	a.observe(time.Second)
	a.stop(bounds{requests: 10, heap: 32 << 20})
}

// Item 5: the server accepts the watch and never sends its headers. The
// informer stayed in Watching for ever with a stale cache and no error.
func TestAttackWatchHeadersNeverCome(t *testing.T) {
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			listOne(a, w)
			return
		}
		<-r.Context().Done() // no headers, ever
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.cfg.ResponseHeaderTimeout = 200 * time.Millisecond
	a.start()
	a.waitSynced()
	e := a.waitErr(reflector.KindNetwork, rest.ErrResponseHeaderTimeout)
	require.Equal(t, "watch", e.Op)
	a.observe(time.Second)
	a.stop(bounds{requests: 10, heap: 16 << 20})
}

// Class "endless frames": a frame that never ends (an object whose string
// value goes on for ever). The frame limit ends the watch; the relist and
// re-watch come after a backoff.
func TestAttackEndlessFrame(t *testing.T) {
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			listOne(a, w)
			return
		}
		startStream(w)
		_, _ = w.Write([]byte(`{"type":"ADDED","object":{"metadata":{"name":"`))
		chunk := []byte(strings.Repeat("x", 32<<10))
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.cfg.MaxFrameBytes = 1 << 20
	a.start()
	a.waitSynced()
	a.waitErr(reflector.KindDecode, nil)
	a.observe(time.Second)
	// A relist (a list and a watch) per attempt, backed off from 800ms.
	a.stop(bounds{requests: 24, heap: 32 << 20})
}

// Class "frames over the size limit": a protobuf frame whose length prefix
// announces 4 GiB. Refused before anything is allocated for it.
func TestAttackOversizedFrame(t *testing.T) {
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			listOne(a, w)
			return
		}
		w.Header().Set("Content-Type", rest.ContentTypeProtobuf+";stream=watch")
		w.WriteHeader(http.StatusOK)
		var prefix [4]byte
		binary.BigEndian.PutUint32(prefix[:], 0xFFFFFFFF)
		_, _ = w.Write(prefix[:])
		_, _ = w.Write([]byte("k8s\x00"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.cfg.ContentType = "" // negotiate: the server picks protobuf
	a.start()
	a.waitSynced()
	e := a.waitErr(reflector.KindDecode, nil)
	require.Contains(t, e.Error(), "too large")
	a.observe(time.Second)
	a.stop(bounds{requests: 24, heap: 16 << 20, allocated: 64 << 20})
}

// Class "garbage and invalid UTF-8": frames that are not JSON at all, and
// an event whose type is invalid UTF-8.
func TestAttackGarbageFrames(t *testing.T) {
	var n atomic.Int64
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			listOne(a, w)
			return
		}
		startStream(w)
		if n.Add(1)%2 == 1 {
			_, _ = w.Write([]byte("\xff\xfe\x00garbage\x80\x81{{{\n"))
		} else {
			_, _ = w.Write([]byte("{\"type\":\"\xff\xfeADDED\",\"object\":{\"metadata\":{\"name\":\"\xc3\x28\"}}}\n"))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.start()
	a.waitSynced()
	a.waitErr(reflector.KindDecode, nil)
	a.observe(time.Second)
	a.stop(bounds{requests: 24, heap: 16 << 20})
}

// Class "deeply nested JSON": an object nested 100,000 levels deep inside
// a watch frame.
func TestAttackDeeplyNestedFrame(t *testing.T) {
	deep := `{"type":"ADDED","object":{"metadata":{"name":"d","labels":` + strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000) + "}}}\n"
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			listOne(a, w)
			return
		}
		startStream(w)
		_, _ = w.Write([]byte(deep))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.start()
	a.waitSynced()
	a.waitErr(reflector.KindDecode, nil)
	a.observe(time.Second)
	a.stop(bounds{requests: 24, heap: 32 << 20})
}

// Class "a connection cut mid-frame, repeatedly": every watch sends half a
// frame and the connection is cut. Each cut is a network failure: backed
// off, and no half object reaches the cache.
func TestAttackCutMidFrame(t *testing.T) {
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			listOne(a, w)
			return
		}
		startStream(w)
		_, _ = w.Write([]byte(`{"type":"ADDED","object":{"metadata":{"name":"half","namespace":"ns"`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // cut the connection
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.start()
	a.waitSynced()
	a.waitErr(reflector.KindNetwork, wire.ErrTruncatedFrame)
	a.observe(2 * time.Second)
	a.stop(bounds{requests: 20, heap: 16 << 20})
}

// A flood of valid updates to one object: the queue keeps one per object,
// so the heap stays flat however many arrive.
func TestAttackEventFlood(t *testing.T) {
	a := newAttack(t, floodOnePod)
	a.opts.Reflector.WatchList = reflector.WatchListOff
	a.start()
	a.waitSynced()
	a.observe(2 * time.Second)
	require.Positive(t, a.inf.Stats().Events["MODIFIED"])
	a.stop(bounds{requests: 5, heap: 32 << 20})
}

// floodOnePod lists one pod, then streams MODIFIED events for it, each at a
// new resourceVersion, as fast as the connection takes them, until the
// client goes away.
func floodOnePod(a *attack, w http.ResponseWriter, r *http.Request) {
	if !isWatch(r) {
		listOne(a, w)
		return
	}
	startStream(w)
	for i := 2; ; i++ {
		p := a.sentPod("a")
		p.ResourceVersion = fmt.Sprint(i)
		if !writeEvent(w, "MODIFIED", p) {
			return
		}
	}
}
