package objkey

// The allocation-free key, for the informer's key function (key_intern.go
// in the root package). It goes with key_intern.go: delete that file (and
// its hook), and then this one, which nothing else needs (bench/'s
// indexer benchmark measures it: drop that benchmark with it); the informer
// is still correct, only slower: every watch event then allocates its key,
// even when the cache already holds the same string.
//
// Why it pays: two events in three on a busy watch are updates and deletes
// of objects the cache holds. Building the key into a stack buffer lets the
// informer look it up in the cache first and take the cache's own string,
// so those events allocate no key at all (bench: BenchmarkPipeline's
// allocs/event).

import "k8s.io/apimachinery/pkg/runtime"

// Append appends Of(obj) to dst and returns the extended slice; on error it
// returns dst unchanged. TestAppendIsOf holds it to Of's format.
func Append(dst []byte, obj runtime.Object) ([]byte, error) {
	namespace, name, err := parts(obj)
	if err != nil {
		return dst, err
	}
	if namespace != "" {
		dst = append(dst, namespace...)
		dst = append(dst, '/')
	}
	return append(dst, name...), nil
}
