package wire

import (
	"context"
	"net/http"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/reflector"
)

// A body that does not decode is one failure, KindDecode, whatever its
// encoding and wherever it comes: in a list page, in a watch frame (both
// as the watch's ERROR event, which is what the reflector reads, and as
// the Watcher's Err). Before, a protobuf list was KindOther where a JSON
// one was KindDecode.
func TestWireFailuresHaveOneClassification(t *testing.T) {
	pbEnc := newWireEncoder(rest.ContentTypeProtobuf)
	lists := map[string][]byte{
		rest.ContentTypeJSON:     []byte(`{"kind":"PodList","items":[{"metadata":`),
		rest.ContentTypeProtobuf: append([]byte("k8s\x00"), 0xff, 0xff, 0xff),
	}
	for mt, body := range lists {
		t.Run("list "+mt, func(t *testing.T) {
			ts := testserver.New(t, testserver.ServeBody(mt, http.StatusOK, body))
			_, err := newTestLW(t, ts, Options{}, nil).List(context.Background(), metav1.ListOptions{})
			require.Error(t, err)
			assert.Equal(t, reflector.KindDecode, reflector.KindOf(err), "%v", err)
		})
	}
	frames := map[string][]byte{
		rest.ContentTypeJSON: []byte(`{"type":"ADDED","object":{"metadata":{"name":"x"}]}` + "\n"),
		pbEnc.contentType:    pbEnc.rawFrame(t, "ADDED", append([]byte("k8s\x00"), 0x0a, 0x7f, 0x01)),
	}
	for mt, frame := range frames {
		t.Run("watch "+mt, func(t *testing.T) {
			evs, err := watchStream(t, mt, frame, nil)
			require.Len(t, evs, 1)
			require.Equal(t, watch.Error, evs[0].Type)
			event := apierrors.FromObject(evs[0].Object.(runtime.Object))
			assert.Equal(t, reflector.KindDecode, reflector.KindOf(event), "the ERROR event: %v", event)
			assert.Equal(t, reflector.KindDecode, reflector.KindOf(err), "Err: %v", err)
		})
	}
}

// A stream cut inside a frame is not a normal close (Err nil, re-watch at
// once): it is a network failure, which the reflector backs off from, in
// either encoding, and no event is made of the half frame.
func TestCutFrameIsANetworkFailure(t *testing.T) {
	pbEnc := newWireEncoder(rest.ContentTypeProtobuf)
	pbFrame := pbEnc.rawFrame(t, "ADDED", append([]byte("k8s\x00"), 0x0a, 0x00))
	cut := map[string][]byte{
		rest.ContentTypeJSON: []byte(`{"type":"ADDED","object":{"metadata":{"name":"half"`),
		pbEnc.contentType:    pbFrame[:len(pbFrame)-1],
	}
	for mt, stream := range cut {
		t.Run(mt, func(t *testing.T) {
			evs, err := watchStream(t, mt, stream, nil)
			assert.Empty(t, evs)
			require.ErrorIs(t, err, ErrTruncatedFrame)
			assert.Equal(t, reflector.KindNetwork, reflector.KindOf(err), "Err: %v", err)
		})
	}
}
