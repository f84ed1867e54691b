package informer

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/objkey"
)

// KeyOf returns obj's key in the cache and in a work queue: "namespace/name",
// or "name" for a cluster-scoped object. It is client-go's
// MetaNamespaceKeyFunc format, the key the cache stores obj under
// (deltafifo.MetaNamespaceKey builds it too) and the key a lister's Get
// takes apart. It fails, wrapping deltafifo.ErrNilObject or
// deltafifo.ErrNoName, for an object that cannot have a key.
func KeyOf(obj runtime.Object) (string, error) {
	return objkey.Of(obj)
}

// SplitKey takes a key made by KeyOf apart: "shop/web-1" gives ("shop",
// "web-1"), "node-1" gives ("", "node-1"). Anything else (an empty part,
// more than one slash) is a *KeyError wrapping ErrInvalidKey: a worker that
// meets one should drop the key (Forget and Done), because no retry can make
// it valid.
func SplitKey(key string) (namespace, name string, err error) {
	switch parts := strings.Split(key, "/"); {
	case len(parts) == 1 && parts[0] != "":
		return "", parts[0], nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], nil
	}
	return "", "", &KeyError{Key: key}
}

// KeyError reports a key that is neither "namespace/name" nor "name". It
// wraps ErrInvalidKey.
type KeyError struct {
	Key string
}

// Error quotes the key.
func (e *KeyError) Error() string {
	return fmt.Sprintf("informer: key %q is not namespace/name or name: %v", e.Key, ErrInvalidKey)
}

// Unwrap lets errors.Is(err, ErrInvalidKey) match.
func (e *KeyError) Unwrap() error { return ErrInvalidKey }
