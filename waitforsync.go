package informer

import "context"

// Syncer is anything that can say, through a channel, that its cache is
// full: a SharedInformer, or a Registration.
type Syncer interface {
	Synced() <-chan struct{}
}

// WaitForCacheSync blocks until every syncer has synced, and reports true, or
// until ctx is done, and reports false. It is the longhand of
// Factory.WaitForCacheSync, for informers built without a factory, or for
// handler registrations whose own initial events must be handled first.
func WaitForCacheSync(ctx context.Context, syncers ...Syncer) bool {
	for _, s := range syncers {
		select {
		case <-s.Synced():
		case <-ctx.Done():
			if !isClosed(s.Synced()) {
				return false
			}
		}
	}
	return true
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
