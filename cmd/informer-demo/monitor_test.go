package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/reflector"
)

// The page's state bands are drawn from the timeline's state entries, so a
// state the reflector passed through between two samples must be on the
// timeline too (marked as seen between samples), and no state twice.
func TestStatesBetweenSamples(t *testing.T) {
	watching := reflector.Stats{State: reflector.StateWatching}
	tests := []struct {
		name string
		now  reflector.Stats
		want []string
	}{
		{"nothing happened", watching, nil},
		{"a backoff and a relist, both between samples",
			reflector.Stats{State: reflector.StateWatching, Backoffs: 1, Relists: 1},
			[]string{"Watching → BackingOff (between samples)", "BackingOff → Relisting (between samples)", "Relisting → Watching"}},
		{"caught backing off", reflector.Stats{State: reflector.StateBackingOff, Backoffs: 1},
			[]string{"Watching → BackingOff"}},
		{"caught relisting after a quick backoff", reflector.Stats{State: reflector.StateRelisting, Backoffs: 1},
			[]string{"Watching → BackingOff (between samples)", "BackingOff → Relisting"}},
		{"a watch resumed after a quick backoff", reflector.Stats{State: reflector.StateWatching, Backoffs: 1},
			[]string{"Watching → BackingOff (between samples)", "BackingOff → Watching"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &monitor{start: time.Now()}
			m.statesLocked(time.Now(), "pods", watching, tt.now)
			var got []string
			for _, e := range m.timeline {
				got = append(got, e.What)
			}
			require.Equal(t, tt.want, got)
		})
	}
}
