package deltafifo_test

import (
	"github.com/seed31a95821/informer/deltafifo"
	"github.com/seed31a95821/informer/reflector"
)

// The queue is what a reflector writes into.
var _ reflector.Store = (*deltafifo.Queue)(nil)
