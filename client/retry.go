package client

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultRetry is client-go's backoff for conflicts between writers of one
// object: 5 tries, 10ms apart, with 10% jitter. Conflicts clear fast (the
// other writer is done), so the steps do not grow.
var DefaultRetry = wait.Backoff{Steps: 5, Duration: 10 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// RetryOnConflict runs fn until it returns anything but a Conflict, or the
// backoff's steps are spent, or ctx ends. fn must read the object afresh
// each time (from the server, or the lister once it has caught up), apply
// its change to that copy and write it: retrying the same stale object
// would conflict again. It returns fn's last error.
func RetryOnConflict(ctx context.Context, backoff wait.Backoff, fn func() error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(context.Context) (bool, error) {
		last = fn()
		switch {
		case last == nil:
			return true, nil
		case apierrors.IsConflict(last):
			return false, nil
		default:
			return false, last
		}
	})
	if errors.Is(err, wait.ErrWaitTimeout) || wait.Interrupted(err) {
		if last != nil {
			return last
		}
	}
	return err
}
