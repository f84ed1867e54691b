// This file is a fast path: delete it and its hook (the call to
// plainIdentity in admitObject, which then always calls validIdentity),
// and the reflector is still correct, only slower.
//
// Why it pays: validIdentity checks the name and the namespace of every
// object that enters the store. apimachinery's DNS-1123 rule is a regular
// expression, some 700ns a match on the shared 2-core machine, several
// times what the rest of an event costs the reflector (BenchmarkHandleEvent);
// its path-segment rule builds its answer from a loop of substring
// searches, some 130ns. Here both rules are one pass over the bytes, with
// no state: a namespace of a few bytes costs less to check again than to
// look up in a memo of those already checked (BenchmarkPlainIdentity).

package reflector

import "strings"

// plainIdentity reports whether an object called name in namespace ns is
// certainly valid, as validIdentity would find it. False means "check in
// full", not "invalid": validIdentity then decides, and explains.
// TestIdentityFastPathAgrees holds it to apimachinery's rules.
func plainIdentity(name, ns string) bool {
	// content.IsPathSegmentName's rule: not "." or "..", no "/" or "%".
	if name == "" || name == "." || name == ".." ||
		strings.IndexByte(name, '/') >= 0 || strings.IndexByte(name, '%') >= 0 {
		return false
	}
	return ns == "" || dns1123Label(ns)
}

// dns1123Label is content.IsDNS1123Label's rule without its regular
// expression: 1 to 63 bytes of lower-case letters, digits and '-', which
// begin and end with a letter or a digit.
func dns1123Label(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
