package informer

import "errors"

// The informer's sentinel errors, in one place. Errors from the parts below it
// (reflector, queue, indexer, processor) are wrapped with %w and can be told
// apart with errors.Is and errors.As.
var (
	// ErrWrongType reports an object that is not the informer's type T. It is
	// never cached; it reaches the OnError hook.
	ErrWrongType = errors.New("object of the wrong type")
	// ErrAlreadyRunning is returned by a second call to SharedInformer.Run.
	ErrAlreadyRunning = errors.New("informer is already running")
	// ErrUnknownType is returned by the factory for a Go type that its scheme
	// does not know, so it cannot tell which resource to watch.
	ErrUnknownType = errors.New("type is not registered in the scheme")
	// ErrFactoryShutDown is returned when an informer is requested from a
	// factory that has been shut down.
	ErrFactoryShutDown = errors.New("factory is shut down")
	// ErrInvalidKey is wrapped by the *KeyError of SplitKey: a key that is
	// neither "namespace/name" nor "name".
	ErrInvalidKey = errors.New("invalid key")
)
