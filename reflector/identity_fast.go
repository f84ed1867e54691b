// This file is a fast path: delete it and its hook (the call to
// knownValid in validIdentity, and the identities field that holds its
// memo), and the reflector is still correct, only slower.
//
// Why it pays: validIdentity checks the name and the namespace of every
// object that enters the store. apimachinery's DNS-1123 rule is a regular
// expression, some 700ns a match on the shared 2-core machine, several
// times what the rest of an event costs the reflector (BenchmarkHandleEvent);
// its path-segment rule builds its answer from a loop of substring
// searches, some 130ns. Here a namespace is matched once and remembered, so
// that every later event of it costs a compare or a map lookup, and a name
// is checked by two byte searches.

package reflector

import (
	"strings"
)

// maxKnownNamespaces bounds identityMemo: a cluster has hundreds of
// namespaces, rarely thousands.
const maxKnownNamespaces = 4096

// identityMemo remembers the namespaces found valid. A server that sends
// more distinct namespaces than maxKnownNamespaces has the others checked
// in full each time, so the memo's memory stays bounded whatever it sends.
// The zero value is ready to use. It is not safe for concurrent use: only
// the goroutine executing Run admits objects.
type identityMemo struct {
	last  string              // the namespace of the last object found valid
	known map[string]struct{} // every namespace found valid, up to the bound
}

// knownValid reports whether an object called name in namespace ns is
// certainly valid, as validIdentity would find it. False means "check in
// full", not "invalid": validIdentity then decides, and explains.
func (m *identityMemo) knownValid(name, ns string) bool {
	// content.IsPathSegmentName's rule: not "." or "..", no "/" or "%".
	if name == "" || name == "." || name == ".." ||
		strings.IndexByte(name, '/') >= 0 || strings.IndexByte(name, '%') >= 0 {
		return false
	}
	if ns == "" || ns == m.last {
		return true
	}
	if _, ok := m.known[ns]; !ok {
		if !validNamespace(ns) {
			return false
		}
		if m.known == nil {
			m.known = map[string]struct{}{}
		}
		if len(m.known) < maxKnownNamespaces {
			m.known[ns] = struct{}{}
		}
	}
	m.last = ns
	return true
}
