package deltafifo

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/objkey"
)

// KeyFunc gives an object its identity in the queue. Two objects with the
// same key are two states of the same thing: their deltas share one Item.
// A KeyFunc must be deterministic and must not depend on fields that change
// over the object's life (only namespace and name do not).
type KeyFunc func(obj runtime.Object) (string, error)

// MetaNamespaceKey is the default KeyFunc: "namespace/name", or just "name"
// for a cluster-scoped object. It is the same key format as client-go's, so
// keys read from logs or from a lister mean the same thing in both worlds,
// and the key informer.KeyOf returns and a lister's Get looks up: all of
// them are built by one function (internal/objkey). It fails with
// ErrNilObject or ErrNoName for an object that cannot have a key.
func MetaNamespaceKey(obj runtime.Object) (string, error) {
	return objkey.Of(obj)
}
