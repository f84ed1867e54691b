package informer

import (
	"errors"

	"github.com/seed31a95821/informer/reflector"
)

// The informer's sentinel errors, in one place. Errors from the parts below it
// (reflector, queue, indexer, processor) are wrapped with %w and can be told
// apart with errors.Is and errors.As.
var (
	// ErrWrongType reports an object that is not the informer's type T. It is
	// never cached; it reaches the OnError hook. It is reflector.ErrWrongType
	// itself, not a second sentinel: an object of the wrong type is the same
	// fault whichever layer catches it (the reflector, against
	// reflector.Options.ExpectedType, or the informer, against T), so one
	// errors.Is test finds both.
	ErrWrongType = reflector.ErrWrongType
	// ErrAlreadyRunning is returned, wrapped with the informer's name, by a
	// second call to SharedInformer.Run. It is reflector.ErrAlreadyRunning,
	// for the same reason: one sentinel for "Run was called twice".
	ErrAlreadyRunning = reflector.ErrAlreadyRunning
	// ErrUnknownType is returned by the factory for a Go type that its scheme
	// does not know, so it cannot tell which resource to watch.
	ErrUnknownType = errors.New("type is not registered in the scheme")
	// ErrUnknownResource is returned by ForDynamic for a resource that
	// FactoryOptions.Resources does not name and the server's discovery
	// does not list: a CRD not created yet, or a misspelt plural.
	ErrUnknownResource = errors.New("resource not known to the factory or the server")
	// ErrFactoryShutDown is returned when an informer is requested from a
	// factory that has been shut down.
	ErrFactoryShutDown = errors.New("factory is shut down")
	// ErrNoSuchInformer is returned by Factory.Remove for a name the
	// factory has no informer under.
	ErrNoSuchInformer = errors.New("no such informer")
	// ErrRVNotComparable is returned by WaitFor, and by Expectations, for a
	// resourceVersion that is not a decimal number, or a cache at one: the
	// server promises nothing about the order of such versions, so the
	// informer does not guess.
	ErrRVNotComparable = errors.New("resourceVersions are not comparable")
	// ErrInformerStopped is returned by WaitFor once the informer has
	// stopped: its cache will not get any fresher.
	ErrInformerStopped = errors.New("informer stopped")
	// ErrInvalidScope is returned by ForScope for a Scope that cannot be
	// watched: a namespace name that is not a DNS label, "" among other
	// namespaces, a selector that does not parse, or a scope other than
	// the factory's own when FactoryOptions.ListerWatcher, which is told
	// no scope, builds the clients.
	ErrInvalidScope = errors.New("invalid scope")
	// ErrInvalidKey is wrapped by the *KeyError of SplitKey: a key that is
	// neither "namespace/name" nor "name".
	ErrInvalidKey = errors.New("invalid key")
)
