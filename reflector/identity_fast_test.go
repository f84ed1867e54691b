package reflector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// The fast path never admits what apimachinery's rules refuse, and admits
// at once the names and namespaces real clusters use, first time or not.
func TestIdentityFastPathAgrees(t *testing.T) {
	names := []string{"a", "web-7d9f8c6b5-x2k4p", "kube-root-ca.crt", "Upper_case:x@y", ".", "..", "...", ".a",
		"a/b", "../../etc", "a%2Fb", "%", "/", "a.", strings.Repeat("n", 300)}
	namespaces := []string{"", "default", "kube-system", "a1", "1a", "-a", "a-", "A", "a.b", "a/b", "a_b",
		strings.Repeat("n", 63), strings.Repeat("n", 64), "ns\n"}
	var m identityMemo
	for range 2 { // the second round meets remembered namespaces
		for _, name := range names {
			for _, ns := range namespaces {
				want := len(content.IsPathSegmentName(name)) == 0 && (ns == "" || len(content.IsDNS1123Label(ns)) == 0)
				got := m.knownValid(name, ns)
				assert.False(t, got && !want, "fast path admits %q in %q", name, ns)
				assert.Equal(t, want, got, "fast path for %q in %q", name, ns)
			}
		}
	}
}

// The memo holds at most maxKnownNamespaces; the namespaces past it are
// still found valid.
func TestIdentityMemoIsBounded(t *testing.T) {
	var m identityMemo
	for i := range maxKnownNamespaces + 10 {
		assert.True(t, m.knownValid("a", fmt.Sprint("ns-", i)))
	}
	assert.Len(t, m.known, maxKnownNamespaces)
	assert.True(t, m.knownValid("a", fmt.Sprint("ns-", maxKnownNamespaces+5)))
}
