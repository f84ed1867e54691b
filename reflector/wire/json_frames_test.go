package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/rest"
)

// streamRun is what a JSON event decoder made of a stream: its events,
// its offset after each, and the error that ended it.
type streamRun struct {
	events  []watch.Event
	offsets []int64
	err     error
}

func runStream(t testing.TB, tgt *target, r io.Reader, max int64, parts bool) streamRun {
	d := newJSONEventDecoder(r, max, tgt)
	if parts {
		d.withParts(newJSONPartsDecoder(tgt, true))
		require.NotNil(t, d.frames)
	}
	var run streamRun
	for range 10_000 {
		ev, err := d.Next()
		if err != nil {
			run.err = err
			return run
		}
		run.events = append(run.events, ev)
		run.offsets = append(run.offsets, d.Offset())
	}
	t.Fatal("the stream does not end")
	return run
}

// requireSameRun requires the decoder reading frames whole to make of
// stream what the json.Decoder alone makes of it: the same events, the
// same offsets, the same error, read whole or in pieces.
func requireSameRun(t testing.TB, stream []byte, max int64, readers ...func(io.Reader) io.Reader) {
	t.Helper()
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	for i, wrap := range append([]func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }}, readers...) {
		want := runStream(t, tgt, wrap(bytes.NewReader(stream)), max, false)
		got := runStream(t, tgt, wrap(bytes.NewReader(stream)), max, true)
		require.Equal(t, len(want.events), len(got.events), "reader %d: events of %.300q", i, stream)
		for j := range want.events {
			require.Equal(t, want.events[j].Type, got.events[j].Type)
			require.True(t, reflect.DeepEqual(want.events[j].Object, got.events[j].Object), "reader %d: event %d of %.300q", i, j, stream)
		}
		require.Equal(t, want.offsets, got.offsets, "reader %d", i)
		require.Equal(t, want.err == nil, got.err == nil, "reader %d: %v", i, got.err)
		if want.err != nil {
			require.Equal(t, want.err.Error(), got.err.Error(), "reader %d", i)
			var wfe, gfe *FrameError
			if errors.As(want.err, &wfe) {
				// The cause's own figures (a json.SyntaxError's count of
				// the bytes its json.Decoder scanned) are the Decoder's,
				// which begins at the frame where reading whole stopped.
				require.ErrorAs(t, got.err, &gfe)
				require.Equal(t, wfe.Kind, gfe.Kind, "reader %d", i)
				require.Equal(t, wfe.Offset, gfe.Offset, "reader %d", i)
				require.Equal(t, wfe.Size, gfe.Size, "reader %d", i)
				require.Equal(t, reflect.TypeOf(wfe.Cause), reflect.TypeOf(gfe.Cause), "reader %d", i)
			}
		}
	}
}

func jsonFrameStream(t testing.TB, n int) []byte {
	enc := newWireEncoder(rest.ContentTypeJSON)
	var stream []byte
	for _, p := range partsPopulation(n) {
		stream = append(stream, enc.frame(t, watch.Modified, p)...)
	}
	return stream
}

// Good streams, however they are spaced and however they arrive, decode
// as the json.Decoder decodes them.
func TestJSONFramesGoodStreams(t *testing.T) {
	stream := jsonFrameStream(t, 30)
	frames := bytes.SplitAfter(stream, []byte("\n"))
	spaced := func(sep string) []byte { return bytes.Join(frames, []byte(sep)) }
	chunks := func(n int) func(io.Reader) io.Reader {
		return func(r io.Reader) io.Reader { return &chunkReader{r: r, n: n} }
	}
	readers := []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.DataErrReader, iotest.HalfReader, chunks(7), chunks(4099)}
	for name, s := range map[string][]byte{
		"as written":         stream,
		"not separated":      bytes.ReplaceAll(stream, []byte("}\n"), []byte("}")),
		"spaced":             spaced(" \t\r\n  "),
		"leading space":      append([]byte("\n\n   "), stream...),
		"trailing space":     append(bytes.Clone(stream), "   \n"...),
		"empty":              nil,
		"only space":         []byte(" \n "),
		"object before type": []byte(`{"object":{"metadata":{"name":"a","labels":{"x":"y"}}},"type":"ADDED"}` + "\n" + string(frames[0])),
	} {
		t.Run(name, func(t *testing.T) {
			requireSameRun(t, s, rest.DefaultMaxFrameBytes, readers...)
		})
	}
}

// chunkReader returns at most n bytes a read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// Frames of any unusual shape, good or bad, amid good ones: the
// json.Decoder's events and errors, offsets included.
func TestJSONFramesUnusualFrames(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeJSON)
	good := enc.frame(t, watch.Added, partsPopulation(3)[2])
	cm := enc.frame(t, watch.Added, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}})
	status := enc.frame(t, watch.Error, &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	for name, bad := range map[string]string{
		"syntax":             `{"type":"ADDED","object":{"metadata":{"name":"x"}]}`,
		"not an object":      `[1,2]`,
		"scalar":             `7`,
		"unknown type":       `{"type":"EXPLODED","object":{}}`,
		"escaped type":       `{"type":"ADD\u0045D","object":{"metadata":{"name":"e"}}}`,
		"escaped key":        `{"typ\u0065":"ADDED","object":{"metadata":{"name":"e"}}}`,
		"other case key":     `{"Type":"ADDED","type":"ADDED","object":{"metadata":{"name":"e"}}}`,
		"unknown key":        `{"type":"ADDED","future":[1],"object":{"metadata":{"name":"e"}}}`,
		"wrong field type":   `{"type":"ADDED","object":{"metadata":"oops"}}`,
		"bad part":           `{"type":"ADDED","object":{"spec":{"containers":[{"ports":[{"containerPort":"x"}]}]}}}`,
		"missing object":     `{"type":"ADDED"}`,
		"missing type":       `{"object":{}}`,
		"duplicate type":     `{"type":"ADDED","type":"DELETED","object":{}}`,
		"duplicate object":   `{"type":"ADDED","object":{},"object":{}}`,
		"null object":        `{"type":"ADDED","object":null}`,
		"type not a string":  `{"type":1,"object":{}}`,
		"trailing comma":     `{"type":"ADDED","object":{},}`,
		"unclosed":           `{"type":"ADDED","object":{"metadata":{}}`,
		"closed twice":       `{"type":"ADDED","object":{}}}`,
		"string with braces": `{"type":"ADDED","object":{"metadata":{"name":"}}]]{{\"\\","labels":{"a":"{"}}}}`,
		"config map":         string(cm),
		"status":             string(status),
		"deep":               `{"type":"ADDED","object":{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`,
	} {
		t.Run(name, func(t *testing.T) {
			stream := concat(good, []byte(bad+"\n"), good)
			requireSameRun(t, stream, rest.DefaultMaxFrameBytes, iotest.OneByteReader)
		})
	}
}

// A stream cut anywhere, or failing anywhere, ends as it does through the
// json.Decoder.
func TestJSONFramesCutAndFailingStreams(t *testing.T) {
	stream := jsonFrameStream(t, 3)
	for cut := 0; cut <= len(stream); cut += 1 + cut/50 {
		requireSameRun(t, stream[:cut], rest.DefaultMaxFrameBytes, func(r io.Reader) io.Reader { return &chunkReader{r: r, n: 61} }, func(r io.Reader) io.Reader {
			return &failingReader{data: stream[:cut], err: syscall.ECONNRESET}
		})
	}
}

// Frames and the whitespace before them are held to MaxFrameBytes as by
// the json.Decoder: just over and exactly at the limit.
func TestJSONFramesLimit(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeJSON)
	small := enc.frame(t, watch.Added, partsPopulation(1)[0])
	big := enc.frame(t, watch.Added, partsPopulation(30)[25])
	stream := concat(small, big, small)
	size := int64(len(bytes.TrimRight(big, "\n")))
	for _, max := range []int64{size - 1, size, size + 1, 10} {
		requireSameRun(t, stream, max, iotest.OneByteReader)
	}
	requireSameRun(t, concat(small, bytes.Repeat([]byte(" "), int(size)+5), small), size)
}

// FuzzJSONFrames: whatever the stream, reading frames whole gives the
// json.Decoder's events, offsets and error.
func FuzzJSONFrames(f *testing.F) {
	stream := jsonFrameStream(f, 2)
	f.Add(stream, uint16(0))
	f.Add(stream[:len(stream)/2], uint16(3))
	f.Add([]byte(`{"object":{},"type":"ADDED"} {"type":"DELETED","object":{"metadata":{"labels":{"a":"b"}}}}`), uint16(0))
	f.Add([]byte(`{"type":"ADDED","object":{"spec":{"containers":[]}}}`+"\n"+`{"type":"ERROR","object":{"code":410}}`), uint16(40))
	f.Fuzz(func(t *testing.T, stream []byte, max uint16) {
		limit := int64(max)
		if limit == 0 {
			limit = rest.DefaultMaxFrameBytes
		}
		requireSameRun(t, stream, limit, iotest.OneByteReader)
	})
}

func TestJSONFramesGiveBackHugeBuffers(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeJSON)
	p := partsPopulation(1)[0]
	p.Annotations = map[string]string{"blob": strings.Repeat("x", 2*retainedFrameBuffer)}
	stream := concat(enc.frame(t, watch.Added, p), enc.frame(t, watch.Added, partsPopulation(2)[1]))
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	d := newJSONEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
	d.withParts(newJSONPartsDecoder(tgt, true))
	_, err = d.Next()
	require.NoError(t, err)
	_, err = d.Next()
	require.NoError(t, err)
	require.NotNil(t, d.frames, "read whole")
	assert.LessOrEqual(t, cap(d.frames.buf), retainedFrameBuffer, fmt.Sprint("buffer kept: ", cap(d.frames.buf)))
	assert.LessOrEqual(t, cap(d.parts.rest), retainedFrameBuffer)
}

// A frame is looked for in at most MaxFrameBytes of whitespace and is at
// most MaxFrameBytes long; doubling the buffer must not hold twice that
// again (a review found 4 times MaxFrameBytes before most).
func TestJSONFramesBufferStaysNearTwiceTheLimit(t *testing.T) {
	const max = 256 << 10
	enc := newWireEncoder(rest.ContentTypeJSON)
	p := partsPopulation(1)[0]
	p.Annotations = map[string]string{"blob": ""}
	p.Annotations["blob"] = strings.Repeat("x", max-len(enc.frame(t, watch.Added, p))-16)
	frame := enc.frame(t, watch.Added, p)
	require.LessOrEqual(t, len(frame), max)
	stream := concat(bytes.Repeat([]byte(" "), max-1), frame)
	f := &jsonFrames{r: &chunkReader{r: bytes.NewReader(stream), n: 4 << 10}, max: max}
	got, ok := f.next()
	require.True(t, ok, "a frame within the limits is read whole")
	assert.Equal(t, bytes.TrimSpace(frame), got)
	assert.LessOrEqual(t, cap(f.buf), 2*max+minFrameRead, "buffer held")
}
