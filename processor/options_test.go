package processor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/processor"
)

// TestPanicLoggedWithKeys: with no OnError, a handler's panic reaches
// Options.Logger as one structured line. The buffer is read after Run has
// returned, so the handler goroutine's write happened before.
func TestPanicLoggedWithKeys(t *testing.T) {
	var out bytes.Buffer
	p := processor.New(processor.Options{Logger: slog.New(slog.NewJSONHandler(&out, nil))})
	reg, err := p.AddHandler(processor.HandlerFunc(func(processor.Notification) { panic("boom") }),
		processor.HandlerOptions{Name: "broken"}, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { defer close(stopped); p.Run(ctx) }()
	p.Distribute(processor.Notification{Type: processor.Add, Key: "shop/web", Object: newPod("shop", "web"), InInitialList: true}, false)
	p.MarkSynced()
	<-reg.Synced()
	cancel()
	<-stopped

	var line map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &line), out.String())
	assert.Equal(t, "ERROR", line["level"])
	assert.Equal(t, "HandlerPanic", line["error_kind"])
	assert.Equal(t, "broken", line["handler"])
	assert.Equal(t, "shop", line["namespace"])
	assert.Equal(t, "web", line["name"])
	assert.Contains(t, line["error"], "boom")
}
