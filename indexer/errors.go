package indexer

import (
	"errors"
	"fmt"

	"github.com/seed31a95821/informer/internal/objkey"
)

// The errors an Indexer returns. Writes that fail change nothing: the store
// and every index stay exactly as they were before the call.
var (
	// ErrNilObject is returned by Add, Update and Replace for a nil object.
	// It is deltafifo.ErrNilObject too: one definition (internal/objkey).
	ErrNilObject = objkey.ErrNilObject
	// ErrEmptyKey is returned by Add, Update and Replace for an empty key.
	ErrEmptyKey = errors.New("indexer: empty key")
	// ErrIndexExists is returned by AddIndexers (and, through every write, by
	// an Indexer that New could not set up) when an index name is already
	// taken, including by the built-in NamespaceIndex and LabelIndex.
	ErrIndexExists = errors.New("indexer: index already exists")
	// ErrNilIndexFunc is returned by AddIndexers (and, through every write, by
	// an Indexer that New could not set up) for an index without a function.
	ErrNilIndexFunc = errors.New("indexer: nil index function")
	// ErrNoSuchIndex is returned by reads that name an index the Indexer does
	// not have.
	ErrNoSuchIndex = errors.New("indexer: no such index")
	// ErrIndexFuncPanicked is wrapped in an IndexFuncError when an index
	// function panicked instead of returning an error.
	ErrIndexFuncPanicked = errors.New("index function panicked")
)

// IndexFuncError reports that an index function failed (returned an error or
// panicked) for one object, so the write that needed it was refused. The
// built-in indexes fail this way for objects without Kubernetes metadata.
type IndexFuncError struct {
	Index string // the index whose function failed
	Key   string // the key of the object being written
	Err   error  // what the function returned, or wraps ErrIndexFuncPanicked
}

// Error names the index, the key and what went wrong, as in
// `indexer: index "owner" failed for key "shop/web-1": no owner`.
func (e *IndexFuncError) Error() string {
	return fmt.Sprintf("indexer: index %q failed for key %q: %v", e.Index, e.Key, e.Err)
}

// Unwrap lets errors.Is and errors.As see the function's own error.
func (e *IndexFuncError) Unwrap() error { return e.Err }
