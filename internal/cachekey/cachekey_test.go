package cachekey

import "testing"

// TestLookupWithoutLink: a binary that does not link package indexer in (or
// one whose indexer/intern.go was deleted) finds nothing, and the caller
// makes its own string. The link itself is tested in package indexer
// (TestCachekeyLookup).
func TestLookupWithoutLink(t *testing.T) {
	if k, ok := Lookup(nil, []byte("shop/web-1")); ok || k != "" {
		t.Fatalf("Lookup without a link = %q, %v; want nothing", k, ok)
	}
}
