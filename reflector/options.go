package reflector

import (
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// Options configures a Reflector. The zero value is ready to use: every zero
// field means the default documented on it, which is client-go's figure
// wherever client-go has one.
type Options struct {
	// Name identifies the reflector in errors. Default: ExpectedType's Go
	// type (for example "*v1.Pod"), or "reflector".
	Name string

	// ExpectedType is a prototype of the objects to store (for example
	// &corev1.Pod{}). Objects of another Go type, or, when the prototype is
	// an *unstructured.Unstructured with a kind set, of another
	// GroupVersionKind, are skipped and reported as KindWrongType. Nil
	// accepts any object with metadata; objects without metadata are always
	// skipped.
	ExpectedType runtime.Object

	// ResyncPeriod, when positive, makes the reflector call Store.Resync
	// every period (if ShouldResync allows), so that handlers get a regular
	// chance to reconcile everything. Default 0: never.
	ResyncPeriod time.Duration
	// ShouldResync is asked at each ResyncPeriod tick; nil means always.
	// The shared informer answers "yes" only when some handler is due.
	ShouldResync func() bool

	// OnError is called, on the reflector's goroutine, with every error
	// the reflector meets, each an *Error. It must return quickly and must
	// not call Run. Nil: errors are only counted in Stats.
	OnError func(error)

	// Tunables are the rest: how the reflector lists, watches and retries.
	// Embedded, so each reads as a field of Options (opts.PageSize); a
	// literal names them: Options{Tunables: Tunables{PageSize: 100}}. An
	// informer's user sets the same type, as informer.Options.Reflector.
	Tunables
}

// Tunables tune how a reflector lists, watches and retries: the Options
// that say nothing about what is stored or who hears of it. The zero value
// is ready to use: every zero field means the default documented on it.
type Tunables struct {
	// PageSize is the limit of each List page. 0 follows client-go's rule:
	// pages of 500 when listing at resourceVersion "0" or "" , but no paging
	// when listing at a specific resourceVersion, because only an unpaged
	// list can be served from the API server's watch cache (cheap) instead
	// of etcd (expensive: a thundering herd after a control-plane restart).
	// A positive value always pages with that size; a negative one never
	// pages.
	PageSize int64

	// MaxListItems bounds one snapshot: the objects of one list, all its
	// pages together, and the events a WatchList may send before its
	// initial-events-end bookmark. A server that sends more (a continue
	// chain without end, one object repeated for ever) gets a KindDecode
	// error instead of the reflector's memory; a WatchList then falls back
	// to a paged list. Default 2,000,000: over ten times the 150,000 pods
	// Kubernetes supports in one cluster, the largest collection a real
	// cluster holds. Raise it for a resource with more objects.
	MaxListItems int
	// MaxListPages bounds the pages of one list. Default 10,000: the
	// default MaxListItems in pages of 500, with room for a server that
	// returns short pages.
	MaxListPages int

	// Backoff is the retry delay policy. Zero value: client-go's figures.
	Backoff Backoff

	// MinWatchTimeout sets the server-side timeout of each watch: a random
	// timeoutSeconds in [MinWatchTimeout, 2 x MinWatchTimeout). Spreading
	// the timeouts keeps thousands of watches from ending, and reconnecting,
	// at the same moment. Default 5 minutes. (client-go refuses values
	// below 5 minutes; we accept them, for tests against fake servers.)
	MinWatchTimeout time.Duration

	// WatchList chooses how to get the initial state: a streamed WatchList
	// or a paged List. Default WatchListAuto.
	WatchList WatchListMode
	// WatchListTimeout bounds the wait for a WatchList's initial-events-end
	// bookmark: the stream may not stay silent longer than this while the
	// reflector waits for it (and the whole wait may not exceed the watch's
	// own timeout). Then the reflector falls back to list+watch. Default 10s.
	// Silence is measured as the watchdog's is (see StuckWatchFactor): the
	// fall-back comes at most a quarter of WatchListTimeout late.
	WatchListTimeout time.Duration

	// BookmarkInterval is how often the server sends bookmarks on an idle
	// watch. Default 1 minute, the API server's.
	BookmarkInterval time.Duration
	// StuckWatchFactor: a watch silent for longer than StuckWatchFactor x
	// BookmarkInterval is presumed dead (a half-open TCP connection, a
	// proxy that swallowed the stream) and restarted from the last
	// resourceVersion. Default 3; negative disables the watchdog. The
	// watchdog measures silence in ticks of a quarter of that limit, so it
	// acts between the limit and the limit plus a quarter after the last
	// event: never early.
	StuckWatchFactor float64

	// Rand draws the jitter and the watch timeouts. Seed it for
	// reproducible runs. It is used only from the goroutine running Run;
	// do not share one between reflectors that run at the same time.
	// Default: a generator seeded at random.
	Rand *rand.Rand
}

// WatchListMode chooses between streaming the initial state with WatchList
// (KEP-3157: a watch with sendInitialEvents=true) and a paged List.
//
// WatchList costs the server less memory: it streams objects from its watch
// cache instead of building pages. Its end is marked by a BOOKMARK annotated
// k8s.io/initial-events-end: "true", after which the same watch carries on.
type WatchListMode int

const (
	// WatchListAuto tries WatchList unless the ListerWatcher says it cannot
	// (a SupportsWatchList method that returns false), and stops trying, for this reflector's
	// lifetime, once a server has shown it does not support it (it rejected
	// the request, or never sent the bookmark).
	WatchListAuto WatchListMode = iota
	// WatchListOn tries WatchList for every (re)list, falling back to a
	// paged List each time it fails.
	WatchListOn
	// WatchListOff always lists.
	WatchListOff
)

// String returns the mode's name.
func (m WatchListMode) String() string {
	switch m {
	case WatchListAuto:
		return "Auto"
	case WatchListOn:
		return "On"
	case WatchListOff:
		return "Off"
	}
	return "WatchListMode(?)"
}

// Defaults.
const (
	defaultMinWatchTimeout  = 5 * time.Minute
	defaultWatchListTimeout = 10 * time.Second
	defaultBookmarkInterval = time.Minute
	defaultStuckWatchFactor = 3.0
	defaultMaxListItems     = 2_000_000
	defaultMaxListPages     = 10_000
	defaultName             = "reflector"
)

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = defaultName
		if o.ExpectedType != nil {
			o.Name = typeName(o.ExpectedType)
		}
	}
	o.Backoff = o.Backoff.withDefaults()
	if o.MinWatchTimeout <= 0 {
		o.MinWatchTimeout = defaultMinWatchTimeout
	}
	if o.WatchListTimeout <= 0 {
		o.WatchListTimeout = defaultWatchListTimeout
	}
	if o.BookmarkInterval <= 0 {
		o.BookmarkInterval = defaultBookmarkInterval
	}
	if o.StuckWatchFactor == 0 {
		o.StuckWatchFactor = defaultStuckWatchFactor
	}
	if o.MaxListItems <= 0 {
		o.MaxListItems = defaultMaxListItems
	}
	if o.MaxListPages <= 0 {
		o.MaxListPages = defaultMaxListPages
	}
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return o
}

// stuckWatchLimit is the silence after which the watchdog restarts a watch,
// 0 when disabled.
func (o Options) stuckWatchLimit() time.Duration {
	if o.StuckWatchFactor < 0 {
		return 0
	}
	return time.Duration(o.StuckWatchFactor * float64(o.BookmarkInterval))
}

// listLimits are the caps on one snapshot.
func (o Options) listLimits() listLimits {
	return listLimits{maxPages: o.MaxListPages, maxItems: o.MaxListItems}
}
