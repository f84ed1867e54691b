package informer_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	informer "github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/processor"
)

// informer.HandlerOptions is the type a user sets; AddEventHandler copies
// it into a processor.HandlerOptions. Every per-handler option the
// processor has must therefore be settable through the informer's type,
// under the same name and type, or it is out of an informer user's reach.
func TestHandlerOptionsCarryEveryProcessorOption(t *testing.T) {
	ours := reflect.TypeFor[informer.HandlerOptions]()
	for f := range reflect.TypeFor[processor.HandlerOptions]().Fields() {
		got, ok := ours.FieldByName(f.Name)
		if assert.True(t, ok, "informer.HandlerOptions lacks %s", f.Name) {
			assert.Equal(t, f.Type, got.Type, f.Name)
		}
	}
}
