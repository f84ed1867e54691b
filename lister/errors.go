package lister

import (
	"errors"
	"fmt"
)

// The errors a Lister returns besides apimachinery's NotFound (from Get, when
// there is no such object: test it with apierrors.IsNotFound).
var (
	// ErrNoIndexer is returned by every method of a Lister made with a nil
	// Indexer.
	ErrNoIndexer = errors.New("lister: no indexer")
)

// TypeError reports that the Indexer holds, under Key, an object that is not
// of the Lister's type: a Lister[*corev1.Pod] over an Indexer that also holds
// Services, say. It is returned instead of a panic; a List that meets one
// returns no objects.
type TypeError struct {
	Key  string // the key of the offending object
	Want string // the Lister's type, as in "*v1.Pod"
	Got  string // the stored object's type
}

// Error names the key and both types, as in
// `lister: object "shop/web" is a *v1.Service, not a *v1.Pod`.
func (e *TypeError) Error() string {
	return fmt.Sprintf("lister: object %q is a %s, not a %s", e.Key, e.Got, e.Want)
}
