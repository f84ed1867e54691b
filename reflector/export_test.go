package reflector

// InternalSentinels are the sentinel errors the package keeps unexported
// (callers tell these failures apart by Kind), exported to the scripts of
// script_test.go, which run in package reflector_test: a script still says
// which one an error wraps, by its unexported name.
var InternalSentinels = []struct {
	Name string
	Err  error
}{
	{"errNoMetadata", errNoMetadata}, {"errUnknownEvent", errUnknownEvent}, {"errNotList", errNotList},
	{"errWatchListTimeout", errWatchListTimeout}, {"errWatchListClosed", errWatchListClosed},
	{"errStuckWatch", errStuckWatch}, {"errShortWatch", errShortWatch},
	{"errRVBackwards", errRVBackwards},
}
