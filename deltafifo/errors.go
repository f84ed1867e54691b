package deltafifo

import (
	"errors"

	"github.com/seed31a95821/informer/internal/objkey"
)

// The sentinel errors of this package, all in one place. Errors returned by
// Queue methods wrap one of these (test with errors.Is) or wrap the error of a
// function you supplied (KeyFunc, Transform, process), or the context's error.
var (
	// ErrClosed is returned by writes after Close, and by Pop and PopBatch
	// once the queue is closed and holds nothing more to deliver.
	ErrClosed = errors.New("deltafifo: queue closed")

	// ErrRequeue is the one error a process function can return to ask for
	// its batch back: the queue puts every unit of the batch back at the
	// front, in order, and Pop returns the error so that the caller can back
	// off before popping again. Any other error drops the batch (see Pop).
	ErrRequeue = errors.New("deltafifo: requeue batch")

	// ErrNilObject is returned when a nil object (or a typed nil pointer) is
	// given to the queue, or when Transform returns one. Deltas never carry
	// nil objects, so consumers need not check. It is the same error as
	// indexer.ErrNilObject: one check, made where keys are built
	// (internal/objkey), refuses a nil object everywhere.
	ErrNilObject = objkey.ErrNilObject

	// ErrNoName is returned by MetaNamespaceKey for an object without a
	// name: it has no identity, so it cannot have a key.
	ErrNoName = objkey.ErrNoName

	// ErrInvalidArgument is returned for a bad argument that is not an
	// object: a PopBatch size below 1, an empty bookmark resourceVersion.
	ErrInvalidArgument = errors.New("deltafifo: invalid argument")
)
