package fakeapi

import (
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A resourceVersion is an opaque string to clients, but this server, like
// etcd, uses one global counter: every write anywhere increments it, and the
// new value is stamped on the written object. Comparing two RVs of the same
// server therefore orders the writes, which is what lets a watch resume
// "after RV 41" and a list promise "not older than RV 41".

// formatRV renders a resourceVersion for the wire.
func formatRV(rv uint64) string { return strconv.FormatUint(rv, 10) }

// parseRV reads a resourceVersion from a request. Empty means "unset" and
// yields 0; so does "0", which on the wire means "any version will do".
// Callers that must tell the two apart look at the string first.
func parseRV(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, apierrors.NewBadRequest("invalid resource version " + strconv.Quote(s) + ": " + err.Error())
	}
	return rv, nil
}
