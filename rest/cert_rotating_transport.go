package rest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
)

// certRotatingTransport is the RoundTripper of a Config with an exec
// plugin. A TLS connection keeps the client certificate of its handshake,
// and one HTTP/2 connection carries every watch, so a certificate the
// plugin rotates would never be presented. When the plugin's certificate
// generation moves, requests go to a fresh clone of the transport (new
// connections, new handshakes, the new certificate) and every connection
// of the old one is closed, watches included: they end with an error and
// the reflector watches again, on the new transport. client-go closes its
// connections on rotation too.
//
// Switching transports, rather than only closing connections, keeps the
// request that noticed the rotation off the dying connections: the old
// pool may not have seen their close yet.
type certRotatingTransport struct {
	exec *ExecConfig
	base *http.Transport // cloned for each generation

	mu      sync.Mutex // guards gen, current, conns
	gen     uint64
	current *http.Transport
	conns   *connTracker // connections of current
}

func newCertRotatingTransport(exec *ExecConfig, base *http.Transport) *certRotatingTransport {
	rt := &certRotatingTransport{exec: exec, base: base}
	rt.gen = exec.certGen.Load()
	rt.current, rt.conns = rt.generation()
	return rt
}

// generation clones base with a dialer that tracks its connections.
func (rt *certRotatingTransport) generation() (*http.Transport, *connTracker) {
	t, ct := rt.base.Clone(), &connTracker{}
	t.DialContext = ct.dialer(rt.base.DialContext)
	return t, ct
}

// RoundTrip sends req on the transport of the plugin's current certificate.
func (rt *certRotatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return rt.transport().RoundTrip(req)
}

// transport returns the current transport, first replacing it when the
// plugin has rotated its certificate since it was made.
func (rt *certRotatingTransport) transport() *http.Transport {
	gen := rt.exec.certGen.Load()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if gen > rt.gen {
		old, oldConns := rt.current, rt.conns
		rt.current, rt.conns = rt.generation()
		rt.gen = gen
		old.CloseIdleConnections()
		oldConns.closeAll()
	}
	return rt.current
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// current transport.
func (rt *certRotatingTransport) CloseIdleConnections() {
	rt.mu.Lock()
	t := rt.current
	rt.mu.Unlock()
	t.CloseIdleConnections()
}

// errRetiredTransport fails a dial that finished after its transport was
// retired: the connection would carry the old certificate's handshake, and
// nothing would ever close it.
var errRetiredTransport = errors.New("rest: transport retired after the client certificate rotated")

// connTracker remembers open connections so that they can all be closed at
// once. The zero value is ready to use and safe for concurrent use.
type connTracker struct {
	mu      sync.Mutex // guards conns and retired
	conns   map[*trackedConn]struct{}
	retired bool // closeAll has run: later dials are refused
}

// dialer wraps dial so that every connection it makes is tracked until it
// is closed.
func (ct *connTracker) dialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, tracker: ct}
		ct.mu.Lock()
		if ct.retired {
			// A dial that began before the rotation and ended after it.
			ct.mu.Unlock()
			_ = c.Close()
			return nil, errRetiredTransport
		}
		if ct.conns == nil {
			ct.conns = map[*trackedConn]struct{}{}
		}
		ct.conns[tc] = struct{}{}
		ct.mu.Unlock()
		return tc, nil
	}
}

// closeAll closes every tracked connection, and retires the tracker: a dial
// still under way ends in errRetiredTransport instead of a connection that
// nobody would close.
func (ct *connTracker) closeAll() {
	ct.mu.Lock()
	conns := ct.conns
	ct.conns, ct.retired = nil, true
	ct.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}

// trackedConn leaves its tracker when closed.
type trackedConn struct {
	net.Conn
	tracker *connTracker
}

func (c *trackedConn) Close() error {
	c.tracker.mu.Lock()
	delete(c.tracker.conns, c)
	c.tracker.mu.Unlock()
	return c.Conn.Close()
}
