package wire

import (
	"context"
	"net"
	"sync"
)

// connTracker remembers open connections so that they can all be closed at
// once: when an exec plugin rotates its client certificate, connections
// made with the old one must go, or an HTTP/2 connection carrying watches
// would present it until the server restarts. The zero value is ready to
// use and safe for concurrent use.
type connTracker struct {
	mu    sync.Mutex // guards conns
	conns map[*trackedConn]struct{}
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
		if ct.conns == nil {
			ct.conns = map[*trackedConn]struct{}{}
		}
		ct.conns[tc] = struct{}{}
		ct.mu.Unlock()
		return tc, nil
	}
}

// closeAll closes every tracked connection; requests on them fail and are
// retried on new ones by their callers (the reflector relists or
// rewatches).
func (ct *connTracker) closeAll() {
	ct.mu.Lock()
	conns := ct.conns
	ct.conns = nil
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
