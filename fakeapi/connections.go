package fakeapi

import (
	"net"
	"net/http"
	"sync"
)

// connTracker knows the open client connections and the requests in flight,
// so that CloseClientConnections can cut the former and Close can wait for
// the latter: no request goroutine may outlive Close. Safe for concurrent
// use; the zero value is ready.
type connTracker struct {
	mu sync.Mutex // guards conns and closing
	// conns are the connections that are not closed yet.
	conns map[net.Conn]struct{}
	// closing is set by wait; requests arriving after it are refused, so
	// inflight.Add never races with inflight.Wait.
	closing  bool
	inflight sync.WaitGroup
}

// track is the http.Server ConnState hook.
func (t *connTracker) track(c net.Conn, state http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch state {
	case http.StateNew:
		if t.conns == nil {
			t.conns = map[net.Conn]struct{}{}
		}
		t.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(t.conns, c)
	}
}

// closeAll closes every tracked connection.
func (t *connTracker) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		_ = c.Close()
	}
}

// begin registers a request; it returns false once the server is closing.
func (t *connTracker) begin() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return false
	}
	t.inflight.Add(1)
	return true
}

// end unregisters a request started with begin.
func (t *connTracker) end() { t.inflight.Done() }

// wait refuses new requests and waits for the ones in flight.
func (t *connTracker) wait() {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
	t.inflight.Wait()
}
