package fakeapi

import (
	"net"
	"net/http"
	"sync"
)

// connTracker knows the open client connections and the requests in flight,
// so that CloseClientConnections can cut the former and Close can wait for
// both: no request goroutine may outlive Close, and no connection either
// (net/http closes each on its own goroutine, after Close has cut it). Safe
// for concurrent use; the zero value is ready.
type connTracker struct {
	mu sync.Mutex // guards conns and closing
	// conns are the connections that are not closed yet.
	conns map[net.Conn]struct{}
	// open counts them too, for waitClosed. net/http reports every
	// connection New, from the goroutine that accepts, before it starts
	// serving it, so no Add can come after Close has stopped accepting.
	open sync.WaitGroup
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
		t.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		if _, ok := t.conns[c]; ok {
			delete(t.conns, c)
			t.open.Done()
		}
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

// waitClosed waits until net/http has closed every connection it reported
// New. Call it only once no connection can be accepted any more.
func (t *connTracker) waitClosed() { t.open.Wait() }
