package reflector

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// The fast path never admits what apimachinery's rules refuse, and admits
// at once the names and namespaces real clusters use.
func TestIdentityFastPathAgrees(t *testing.T) {
	names := []string{"a", "web-7d9f8c6b5-x2k4p", "kube-root-ca.crt", "Upper_case:x@y", ".", "..", "...", ".a",
		"a/b", "../../etc", "a%2Fb", "%", "/", "a.", strings.Repeat("n", 300)}
	namespaces := []string{"", "default", "kube-system", "a1", "1a", "-a", "a-", "-", "a", "0", "A", "aB", "a.b", "a/b",
		"a_b", "a b", "é", "a\x00", strings.Repeat("n", 63), strings.Repeat("n", 64), "ns\n", "a--b", "{", "`", "/", ":"}
	for _, name := range names {
		for _, ns := range namespaces {
			want := len(content.IsPathSegmentName(name)) == 0 && (ns == "" || len(content.IsDNS1123Label(ns)) == 0)
			assert.Equal(t, want, plainIdentity(name, ns), "fast path for %q in %q", name, ns)
		}
	}
}

// Every single byte, and every pair, agrees with apimachinery's DNS-1123
// rule: the character classes and both ends, exhaustively.
func TestDNS1123LabelAgreesOnShortStrings(t *testing.T) {
	for a := range 256 {
		s := string([]byte{byte(a)})
		assert.Equal(t, len(content.IsDNS1123Label(s)) == 0, dns1123Label(s), "%q", s)
		for b := range 256 {
			s := string([]byte{byte(a), byte(b)})
			if got, want := dns1123Label(s), len(content.IsDNS1123Label(s)) == 0; got != want {
				t.Fatalf("%q: fast path %v, apimachinery %v", s, got, want)
			}
		}
	}
}

// BenchmarkPlainIdentity is the check every stored object passes: a
// replica's pod name, in one of ten namespaces in turn.
func BenchmarkPlainIdentity(b *testing.B) {
	namespaces := []string{"ns-0", "ns-1", "ns-2", "ns-3", "ns-4", "ns-5", "ns-6", "ns-7", "ns-8", "kube-system"}
	i := 0
	for b.Loop() {
		if !plainIdentity("app-7-7d9f8b6c5-00042", namespaces[i%len(namespaces)]) {
			b.Fatal("refused")
		}
		i++
	}
}
