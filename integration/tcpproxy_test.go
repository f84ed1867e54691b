package integration

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// tcpProxy stands between a client and a server as a network would: it
// forwards bytes in both directions without looking at them, so TLS passes
// through untouched and the client still verifies the server's own
// certificate (the real server's has 127.0.0.1 among its names, which is
// also the proxy's address).
//
// It exists to break the network on demand, which neither server can do to
// itself in the same way: DropAll cuts every open connection (what a node
// reboot or a load balancer failover does to a watch), and Pause makes new
// connections fail until Resume (a server that is unreachable for a while,
// during which the world moves on).
//
// A tcpProxy is safe for concurrent use.
type tcpProxy struct {
	ln     net.Listener
	target string // host:port the proxy forwards to

	mu     sync.Mutex            // guards paused, closed and conns
	paused bool                  // new connections are reset at once
	closed bool                  // Close was called
	conns  map[net.Conn]struct{} // every open connection, client and server side

	wg sync.WaitGroup // the accept loop and every forwarding goroutine
}

// newTCPProxy listens on a random loopback port and forwards every
// connection to target. It is closed when t ends.
func newTCPProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcpproxy: %v", err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.acceptLoop)
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port; clients dial it instead of the server.
func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

// DropAll cuts every open connection, in both directions, with a TCP reset:
// the client sees "connection reset by peer" or an unexpected EOF in the
// middle of whatever it was reading, as after a network failure. New
// connections are still accepted (unless paused).
func (p *tcpProxy) DropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		reset(c)
		delete(p.conns, c)
	}
}

// Pause makes every new connection fail: it is accepted and reset at once,
// before a byte is forwarded, so the client's dial or TLS handshake fails.
// Open connections are not touched; call DropAll as well to cut them.
func (p *tcpProxy) Pause() { p.mu.Lock(); p.paused = true; p.mu.Unlock() }

// Resume lets new connections through again.
func (p *tcpProxy) Resume() { p.mu.Lock(); p.paused = false; p.mu.Unlock() }

// Close stops listening, cuts every connection and waits for every goroutine
// the proxy started. It is idempotent.
func (p *tcpProxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close() // ends acceptLoop
	p.DropAll()
	p.wg.Wait()
}

func (p *tcpProxy) acceptLoop() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // listener closed
		}
		p.mu.Lock()
		refuse := p.paused || p.closed
		p.mu.Unlock()
		if refuse {
			reset(client)
			continue
		}
		p.wg.Go(func() { p.forward(client) })
	}
}

// forward dials the server and copies bytes both ways until either side
// closes or DropAll resets them.
func (p *tcpProxy) forward(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		reset(client)
		return
	}
	if !p.track(client, server) {
		reset(client)
		reset(server)
		return
	}
	defer p.untrack(client, server)
	var copies sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if err == nil || errors.Is(err, io.EOF) {
			// A clean close on one side is passed on as a half-close, so
			// that the other side sees EOF where the sender meant it.
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
				return
			}
		}
		// Any other error (a reset) cuts both sides.
		_ = dst.Close()
		_ = src.Close()
	}
	copies.Go(func() { pipe(server, client) })
	copies.Go(func() { pipe(client, server) })
	copies.Wait()
	_ = client.Close()
	_ = server.Close()
}

// track records a connection pair, unless the proxy closed or paused while
// the server was dialled (then the pair must not be used).
func (p *tcpProxy) track(client, server net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.paused {
		return false
	}
	p.conns[client] = struct{}{}
	p.conns[server] = struct{}{}
	return true
}

func (p *tcpProxy) untrack(client, server net.Conn) {
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// reset closes c with SO_LINGER 0, which sends a TCP RST instead of a FIN:
// the peer learns at once that the connection is gone, instead of reading a
// clean end of stream.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// The proxy's own test, against an echo server: bytes pass both ways,
// DropAll cuts an open connection, Pause refuses new ones until Resume.
func TestTCPProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served sync.WaitGroup
	served.Go(func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			served.Go(func() { _, _ = io.Copy(c, c); _ = c.Close() })
		}
	})
	t.Cleanup(func() { _ = echo.Close(); served.Wait() })
	p := newTCPProxy(t, echo.Addr().String())

	roundTrip := func(c net.Conn, msg string) error {
		if _, err := c.Write([]byte(msg)); err != nil {
			return err
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
		if string(buf) != msg {
			return errors.New("echoed " + string(buf) + ", want " + msg)
		}
		return nil
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	c := dial()
	if err := roundTrip(c, "hello"); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.DropAll()
	if err := roundTrip(c, "again"); err == nil {
		t.Fatal("a dropped connection still carried bytes")
	}

	p.Pause()
	// The reset may even beat the dial's own return: either way, refused.
	if paused, err := net.Dial("tcp", p.Addr()); err == nil {
		if err := roundTrip(paused, "paused"); err == nil {
			t.Fatal("a connection made while paused carried bytes")
		}
		_ = paused.Close()
	}
	p.Resume()
	if err := roundTrip(dial(), "resumed"); err != nil {
		t.Fatalf("after Resume: %v", err)
	}
	p.Close()
	p.Close() // idempotent
}
