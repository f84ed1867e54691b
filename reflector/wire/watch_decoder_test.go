package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// watchStream serves stream once and returns the ended watch's events and
// its Err.
func watchStream(t *testing.T, contentType string, stream []byte, mutate func(*rest.Config)) ([]watch.Event, error) {
	t.Helper()
	ts := testserver.New(t, serveStream(contentType, stream, 5))
	w, err := newTestLW(t, ts, Options{}, mutate).Watch(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	evs := collect(t, w)
	return evs, w.(*Watcher).Err()
}

// requireFrameErrorEvent checks the final event a refused frame produces:
// a watch.Error whose Status names the frame problem and carries the
// ClientWatchDecoding cause, so that reflectors file it as a decoding error.
func requireFrameErrorEvent(t *testing.T, ev watch.Event, cause string) {
	t.Helper()
	require.Equal(t, watch.Error, ev.Type)
	st, ok := ev.Object.(*metav1.Status)
	require.True(t, ok, "got %T", ev.Object)
	err := apierrors.FromObject(st)
	assert.True(t, apierrors.IsInternalError(err), "reason %q", st.Reason)
	require.NotNil(t, st.Details)
	require.Len(t, st.Details.Causes, 2)
	assert.EqualValues(t, cause, st.Details.Causes[0].Type)
	assert.True(t, apierrors.HasStatusCause(err, clientWatchDecoding))
}

// A stream cut inside a frame (a server restarting) delivers the complete
// frames, then ends without an error event; Err says what happened.
func TestWatchFrameCutInHalf(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			enc := newWireEncoder(mt)
			third := enc.frame(t, watch.Added, testPod("ns1", "c", "3"))
			// len-2: a JSON frame without only its newline is still complete.
			for _, cut := range []int{1, 3, len(third) / 2, len(third) - 2} {
				stream := concat(enc.frame(t, watch.Added, testPod("ns1", "a", "1")), enc.frame(t, watch.Added, testPod("ns1", "b", "2")), third[:cut])
				evs, err := watchStream(t, enc.contentType, stream, nil)
				require.Len(t, evs, 2, "cut=%d", cut)
				assert.Equal(t, "b", podName(t, evs[1].Object))
				assert.ErrorIs(t, err, ErrTruncatedFrame, "cut=%d", cut)
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut=%d: the cause, for callers that classify network failures", cut)
				var fe *FrameError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, int64(len(stream)-cut), fe.Offset, "offset of the cut frame")
			}
		})
	}
}

func TestWatchMalformedFrame(t *testing.T) {
	jsonEnc, pbEnc := newWireEncoder(rest.ContentTypeJSON), newWireEncoder(rest.ContentTypeProtobuf)
	goodJSON := jsonEnc.frame(t, watch.Added, testPod("ns1", "a", "1"))
	goodPB := pbEnc.frame(t, watch.Added, testPod("ns1", "a", "1"))
	pbFrame := func(payload []byte) []byte {
		return binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	}
	badEnvelope := append(pbFrame([]byte{0xff, 0xff}), 0xff, 0xff)
	cases := []struct {
		name, contentType string
		bad               []byte
	}{
		{"json syntax", rest.ContentTypeJSON, []byte(`{"type":"ADDED","object":{"metadata":{"name":"x"}]}` + "\n")},
		{"json not an object", rest.ContentTypeJSON, []byte("[1,2]\n")},
		{"json unknown event type", rest.ContentTypeJSON, jsonEnc.rawFrame(t, "EXPLODED", jsonEnc.object(t, testPod("ns1", "b", "2")))},
		{"json wrong field type", rest.ContentTypeJSON, []byte(`{"type":"ADDED","object":{"metadata":"oops"}}` + "\n")},
		{"json missing object", rest.ContentTypeJSON, []byte(`{"type":"ADDED"}` + "\n")},
		{"json duplicate type", rest.ContentTypeJSON, []byte(`{"type":"ADDED","type":"DELETED","object":{}}` + "\n")},
		{"protobuf broken envelope", rest.ContentTypeProtobuf, badEnvelope},
		{"protobuf unknown event type", rest.ContentTypeProtobuf, pbEnc.rawFrame(t, "EXPLODED", pbEnc.object(t, testPod("ns1", "b", "2")))},
		{"protobuf object without magic", rest.ContentTypeProtobuf, pbEnc.rawFrame(t, "ADDED", []byte("not-k8s"))},
		{"protobuf garbage object", rest.ContentTypeProtobuf, pbEnc.rawFrame(t, "ADDED", append([]byte("k8s\x00"), 0x0a, 0x7f, 0x01))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			good, ct := goodJSON, rest.ContentTypeJSON
			if tc.contentType == rest.ContentTypeProtobuf {
				good, ct = goodPB, pbEnc.contentType
			}
			// A good frame, the bad one, and a good one the watch must
			// never reach: after a bad frame nothing can be trusted.
			evs, err := watchStream(t, ct, concat(good, tc.bad, good), nil)
			require.Len(t, evs, 2)
			assert.Equal(t, "a", podName(t, evs[0].Object))
			requireFrameErrorEvent(t, evs[1], "MalformedFrame")
			assert.ErrorIs(t, err, ErrMalformedFrame)
			var fe *FrameError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, int64(len(good)), fe.Offset)
		})
	}
}

func TestWatchOversizedFrame(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			enc := newWireEncoder(mt)
			small := enc.frame(t, watch.Added, testPod("ns1", "small", "1"))
			bigPod := testPod("ns1", "big", "2")
			bigPod.Annotations = map[string]string{"blob": strings.Repeat("x", 8<<10)}
			big := enc.frame(t, watch.Added, bigPod)
			// The limit counts the frame's payload: the JSON object without
			// its trailing newline, the protobuf message without its 4-byte
			// length prefix.
			payload := func(frame []byte) int64 {
				if mt == rest.ContentTypeJSON {
					return int64(len(bytes.TrimRight(frame, "\n")))
				}
				return int64(len(frame) - 4)
			}

			limit := payload(big) - 1
			evs, err := watchStream(t, enc.contentType, concat(small, big, small), func(c *rest.Config) { c.MaxFrameBytes = limit })
			require.Len(t, evs, 2)
			assert.Equal(t, "small", podName(t, evs[0].Object))
			requireFrameErrorEvent(t, evs[1], "FrameTooLarge")
			assert.ErrorIs(t, err, ErrFrameTooLarge)
			var fe *FrameError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, int64(len(small)), fe.Offset)

			// Exactly at the limit, the same stream decodes in full.
			evs, err = watchStream(t, enc.contentType, concat(small, big, small), func(c *rest.Config) { c.MaxFrameBytes = payload(big) })
			require.NoError(t, err)
			require.Len(t, evs, 3)
			assert.Len(t, evs[1].Object.(*corev1.Pod).Annotations["blob"], 8<<10)
		})
	}
}

// A protobuf length prefix is checked before any byte of the frame is
// read or allocated: a corrupt 4 GiB prefix costs nothing.
func TestWatchProtobufHugeLengthPrefix(t *testing.T) {
	stream := binary.BigEndian.AppendUint32(nil, 0xffffffff)
	evs, err := watchStream(t, newWireEncoder(rest.ContentTypeProtobuf).contentType, stream, nil)
	require.Len(t, evs, 1)
	requireFrameErrorEvent(t, evs[0], "FrameTooLarge")
	var fe *FrameError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(0xffffffff), fe.Size)
}

func TestFrameLimiterCountsFromFrameStart(t *testing.T) {
	l := &frameLimiter{r: strings.NewReader(strings.Repeat("a", 100)), max: 10}
	buf := make([]byte, 64)
	n, err := l.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 10, n, "never more than max past the frame start")
	_, err = l.Read(buf)
	assert.True(t, errors.Is(err, ErrFrameTooLarge))
	l.startFrame(8) // the decoder consumed 8 bytes: 2 are buffered, 8 more allowed
	n, err = l.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 8, n)
}

func TestReadVarint(t *testing.T) {
	cases := []struct {
		in    []byte
		v     uint64
		n     int
		label string
	}{
		{[]byte{0x00}, 0, 1, "zero"},
		{[]byte{0x96, 0x01}, 150, 2, "two bytes"},
		{[]byte{0x96}, 0, 0, "truncated"},
		{bytes.Repeat([]byte{0x80}, 11), 0, -1, "too long"},
	}
	for _, tc := range cases {
		v, n := readVarint(tc.in)
		assert.Equal(t, tc.v, v, tc.label)
		assert.Equal(t, tc.n, n, tc.label)
	}
}

// Bad frames must never panic the decoder, whatever the bytes.
func FuzzProtobufEventDecoder(f *testing.F) {
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	f.Add(enc.frame(f, watch.Added, testPod("ns", "a", "1")))
	f.Add([]byte{0, 0, 0, 2, 0x0a, 0xff})
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, stream []byte) {
		d := newProtobufEventDecoder(bytes.NewReader(stream), 1<<20, tgt)
		for range 100 {
			if _, err := d.Next(); err != nil {
				return
			}
		}
	})
}

func FuzzJSONEventDecoder(f *testing.F) {
	enc := newWireEncoder(rest.ContentTypeJSON)
	f.Add(enc.frame(f, watch.Added, testPod("ns", "a", "1")))
	f.Add([]byte(`{"object":{},"type":"ERROR"}`))
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, stream []byte) {
		d := newJSONEventDecoder(bytes.NewReader(stream), 1<<20, tgt)
		for range 100 {
			if _, err := d.Next(); err != nil {
				return
			}
		}
	})
}

// Status bodies, with or without a Status, with or without Retry-After.
func TestErrorResponses(t *testing.T) {
	jsonEnc, pbEnc := newWireEncoder(rest.ContentTypeJSON), newWireEncoder(rest.ContentTypeProtobuf)
	expired := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}
	forbidden := &metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "pods is forbidden"}
	throttled := &metav1.Status{Status: metav1.StatusFailure, Code: 429, Reason: metav1.StatusReasonTooManyRequests, Message: "slow down"}
	cases := []struct {
		name        string
		code        int
		contentType string
		body        []byte
		retryAfter  string
		check       func(error) bool
		delay       int
	}{
		{"410 Status JSON", 410, rest.ContentTypeJSON, jsonEnc.object(t, expired), "", apierrors.IsResourceExpired, 0},
		{"403 Status protobuf", 403, rest.ContentTypeProtobuf, pbEnc.object(t, forbidden), "", apierrors.IsForbidden, 0},
		{"429 Status with Retry-After", 429, rest.ContentTypeJSON, jsonEnc.object(t, throttled), "7", apierrors.IsTooManyRequests, 7},
		{"429 without body", 429, "", nil, "3", apierrors.IsTooManyRequests, 3},
		{"410 without body", 410, "", nil, "", apierrors.IsGone, 0},
		{"500 HTML page", 500, "text/html", []byte("<html>oops</html>"), "", apierrors.IsInternalError, 0},
		{"503 JSON that is not a Status", 503, rest.ContentTypeJSON, []byte(`{"kind":"Pod"}`), "1", apierrors.IsServiceUnavailable, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				testserver.ServeBody(tc.contentType, tc.code, tc.body)(w, r)
			})
			lw := newTestLW(t, ts, Options{}, nil)
			for _, verb := range []string{"list", "watch"} {
				var err error
				if verb == "list" {
					_, err = lw.List(context.Background(), metav1.ListOptions{})
				} else {
					_, err = lw.Watch(context.Background(), metav1.ListOptions{})
				}
				require.Error(t, err)
				assert.True(t, tc.check(err), "%s: %v", verb, err)
				var se *apierrors.StatusError
				require.ErrorAs(t, err, &se)
				assert.EqualValues(t, tc.code, se.Status().Code)
				delay, ok := apierrors.SuggestsClientDelay(err)
				assert.Equal(t, tc.delay > 0, ok, verb)
				assert.Equal(t, tc.delay, delay, verb)
			}
		})
	}
}

// failingReader returns its error once the data is consumed, like a body
// whose connection was reset.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// A connection error inside a frame cuts that frame (and keeps the cause);
// between frames it passes through as the transport error it is.
func TestDecoderConnectionErrors(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	for _, mt := range mediaTypes {
		enc := newWireEncoder(mt)
		frame := enc.frame(t, watch.Added, testPod("ns1", "a", "1"))
		newDec := func(r io.Reader) eventDecoder {
			if mt == rest.ContentTypeJSON {
				return newJSONEventDecoder(r, rest.DefaultMaxFrameBytes, tgt)
			}
			return newProtobufEventDecoder(r, rest.DefaultMaxFrameBytes, tgt)
		}

		dec := newDec(&failingReader{data: concat(frame, frame[:10]), err: syscall.ECONNRESET})
		_, err := dec.Next()
		require.NoError(t, err, mt)
		_, err = dec.Next()
		assert.ErrorIs(t, err, ErrTruncatedFrame, mt)
		assert.ErrorIs(t, err, syscall.ECONNRESET, mt)

		dec = newDec(&failingReader{data: frame, err: syscall.ECONNRESET})
		_, err = dec.Next()
		require.NoError(t, err, mt)
		_, err = dec.Next()
		assert.ErrorIs(t, err, syscall.ECONNRESET, mt)
		assert.NotErrorIs(t, err, ErrTruncatedFrame, "%s: nothing of the next frame had arrived", mt)
	}
}
