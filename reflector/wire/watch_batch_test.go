package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/rest"
)

// pbFrames returns n protobuf ADDED frames, pods p0, p1, ...
func pbFrames(t *testing.T, n int) [][]byte {
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = enc.frame(t, watch.Added, testPod("ns", fmt.Sprint("p", i), fmt.Sprint(i+1)))
	}
	return frames
}

// frameReady says yes only when the next frame is in the buffer whole: not
// for a frame cut short, not for a length prefix claiming more than is
// there, not at the end of the stream; and Next then decodes that frame.
func TestProtobufFrameReady(t *testing.T) {
	tgt := podTarget(t, false)
	frames := pbFrames(t, 3)

	t.Run("whole frames", func(t *testing.T) {
		d := newProtobufEventDecoder(bytes.NewReader(bytes.Join(frames, nil)), rest.DefaultMaxFrameBytes, tgt)
		assert.False(t, d.frameReady(), "nothing read yet: the buffer is empty")
		for i := range frames {
			ev, err := d.Next()
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprint("p", i), podName(t, ev.Object))
			assert.Equal(t, i < len(frames)-1, d.frameReady(), "after frame %d", i)
		}
		_, err := d.Next()
		assert.Equal(t, io.EOF, err)
	})
	t.Run("last frame cut short", func(t *testing.T) {
		stream := bytes.Join(frames, nil)
		d := newProtobufEventDecoder(bytes.NewReader(stream[:len(stream)-1]), rest.DefaultMaxFrameBytes, tgt)
		_, err := d.Next()
		require.NoError(t, err)
		assert.True(t, d.frameReady())
		_, err = d.Next()
		require.NoError(t, err)
		assert.False(t, d.frameReady(), "the third frame lacks its last byte")
	})
	t.Run("hostile length prefix", func(t *testing.T) {
		stream := append(bytes.Clone(frames[0]), 0xff, 0xff, 0xff, 0xff, 1, 2, 3)
		d := newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
		_, err := d.Next()
		require.NoError(t, err)
		assert.False(t, d.frameReady())
		_, err = d.Next()
		var fe *FrameError
		require.ErrorAs(t, err, &fe)
		assert.ErrorIs(t, fe, ErrFrameTooLarge)
	})
}

// scriptedDecoder returns its events in order, then err; ready[i] is what
// frameReady answers after the i-th event.
type scriptedDecoder struct {
	events []watch.Event
	ready  []bool
	err    error
	next   int
}

func (d *scriptedDecoder) Next() (watch.Event, error) {
	if d.next == len(d.events) {
		return watch.Event{}, d.err
	}
	d.next++
	return d.events[d.next-1], nil
}

func (d *scriptedDecoder) Offset() int64    { return 0 }
func (d *scriptedDecoder) frameReady() bool { return d.ready[d.next-1] }

// decodeAhead takes events while the next frame is ready, never more than
// aheadMax, and returns an error only after the events decoded before it.
func TestDecodeAhead(t *testing.T) {
	n := aheadMax + 5
	events := make([]watch.Event, n)
	for i := range events {
		events[i] = watch.Event{Type: watch.Added, Object: testPod("ns", fmt.Sprint("p", i), fmt.Sprint(i+1))}
	}
	ready := make([]bool, n)
	for i := range ready {
		ready[i] = true
	}
	ready[2] = false // frames 0..2 arrived together, then a pause
	boom := errors.New("boom")
	d := &scriptedDecoder{events: events, ready: ready, err: boom}
	w := &Watcher{decoder: d}

	var got []watch.Event
	var sizes []int
	batch := make([]watch.Event, 0, aheadMax)
	for {
		var err error
		batch, err = w.decodeAhead(d, batch[:0])
		sizes = append(sizes, len(batch))
		got = append(got, batch...)
		if err != nil {
			require.ErrorIs(t, err, boom)
			break
		}
	}
	assert.Equal(t, []int{3, aheadMax, n - 3 - aheadMax}, sizes)
	assert.Equal(t, events, got, "every event, in order")

	// A decoder that cannot tell (JSON) gives one event at a time.
	d = &scriptedDecoder{events: events[:2], ready: ready}
	w = &Watcher{decoder: d}
	batch, err := w.decodeAhead(nil, batch[:0])
	require.NoError(t, err)
	assert.Len(t, batch, 1)
}
