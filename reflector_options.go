package informer

import (
	"math/rand/v2"
	"time"

	"github.com/seed31a95821/informer/reflector"
)

// ReflectorOptions tune an informer's list-and-watch machinery: what
// reflector.Options holds, less the fields the informer sets itself
// (ExpectedType is T, ResyncPeriod and ShouldResync carry the handlers'
// resyncs, OnError is Options.OnError, Name is Options.Name). Each field
// means what the field of that name in reflector.Options means, default
// included; the zero value is ready to use.
type ReflectorOptions struct {
	// PageSize is the limit of each List page (reflector.Options.PageSize).
	PageSize int64
	// MaxListItems bounds the objects of one list or WatchList
	// (reflector.Options.MaxListItems).
	MaxListItems int
	// MaxListPages bounds the pages of one list
	// (reflector.Options.MaxListPages).
	MaxListPages int
	// Backoff is the retry delay policy (reflector.Options.Backoff).
	Backoff reflector.Backoff
	// MinWatchTimeout sets the server-side timeout of each watch
	// (reflector.Options.MinWatchTimeout).
	MinWatchTimeout time.Duration
	// WatchList chooses between a streamed WatchList and a paged List
	// (reflector.Options.WatchList).
	WatchList reflector.WatchListMode
	// WatchListTimeout bounds the wait for a WatchList's initial-events-end
	// bookmark (reflector.Options.WatchListTimeout).
	WatchListTimeout time.Duration
	// BookmarkInterval is how often the server sends bookmarks on an idle
	// watch (reflector.Options.BookmarkInterval).
	BookmarkInterval time.Duration
	// StuckWatchFactor sets the watchdog's limit on a silent watch
	// (reflector.Options.StuckWatchFactor).
	StuckWatchFactor float64
	// Rand draws the jitter and the watch timeouts (reflector.Options.Rand).
	// Give each informer its own.
	Rand *rand.Rand
}

// reflectorOptions returns the reflector.Options these tune, with the
// fields the informer owns left for New to set.
func (o ReflectorOptions) reflectorOptions() reflector.Options {
	return reflector.Options{
		PageSize:         o.PageSize,
		MaxListItems:     o.MaxListItems,
		MaxListPages:     o.MaxListPages,
		Backoff:          o.Backoff,
		MinWatchTimeout:  o.MinWatchTimeout,
		WatchList:        o.WatchList,
		WatchListTimeout: o.WatchListTimeout,
		BookmarkInterval: o.BookmarkInterval,
		StuckWatchFactor: o.StuckWatchFactor,
		Rand:             o.Rand,
	}
}
