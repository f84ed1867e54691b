package rest

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A dial that began before a rotation and ends after it must not leave a
// connection behind: the retired transport's tracker closes it at once and
// fails the dial; the caller's next request (the reflector's retry, after
// its backoff) then dials through the new transport.
func TestConnTrackerRefusesDialsEndingAfterRotation(t *testing.T) {
	ct := &connTracker{}
	var made []net.Conn
	release := make(chan struct{})
	dial := ct.dialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-release // the dial is under way while the rotation happens
		client, server := net.Pipe()
		t.Cleanup(func() { _ = server.Close() })
		made = append(made, client)
		return client, nil
	})
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		c, err := dial(context.Background(), "tcp", "example:443")
		done <- result{c, err}
	}()
	ct.closeAll()
	close(release)
	r := <-done
	require.ErrorIs(t, r.err, errRetiredTransport)
	assert.Nil(t, r.conn)
	require.Len(t, made, 1)
	_, err := made[0].Write([]byte("x"))
	assert.ErrorIs(t, err, io.ErrClosedPipe, "the late connection is closed, not leaked")
	assert.Empty(t, ct.conns)
}
