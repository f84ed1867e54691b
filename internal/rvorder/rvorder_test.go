package rvorder

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

func TestOlder(t *testing.T) {
	tests := []struct {
		rv, than string
		want     bool
	}{
		{"11", "12", true},
		{"12", "12", false},
		{"13", "12", false},
		{"99", "100", true},  // shorter is smaller: not "99" > "100" as strings
		{"100", "99", false}, // longer is greater
		{"18446744073709551615", "18446744073709551616", true}, // past uint64
		{"5", "", false},      // nothing to be older than
		{"5", "0", false},     // "0" is no position
		{"0", "5", false},     // nor a version
		{"", "12", false},     // no version is not an old one
		{"011", "12", false},  // a leading zero: not a number apimachinery compares
		{"abb", "abc", false}, // opaque (an aggregated server's): never compared
		{"1a", "12", false},
		{"-2", "-1", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Older(tt.rv, tt.than), "%q older than %q", tt.rv, tt.than)
	}
}

// Older agrees with apimachinery's own comparison: wherever
// CompareResourceVersion can compare two resourceVersions, Older says
// "older" exactly when it says "less", and wherever it cannot, never.
func TestOlderAgreesWithApimachinery(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := "0123456789a-"
	gen := func() string {
		b := make([]byte, rng.IntN(5))
		for i := range b {
			if rng.IntN(8) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = byte('0' + rng.IntN(10))
			}
		}
		return string(b)
	}
	for range 20000 {
		rv, than := gen(), gen()
		cmp, err := resourceversion.CompareResourceVersion(rv, than)
		if got, want := Older(rv, than), err == nil && cmp < 0; got != want {
			t.Fatalf("Older(%q, %q) = %t; apimachinery: %d, %v", rv, than, got, cmp, err)
		}
		if got, want := Comparable(rv, than), err == nil; got != want {
			t.Fatalf("Comparable(%q, %q) = %t; apimachinery: %v", rv, than, got, err)
		}
	}
}

func TestOlderDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		_ = Older("123455", "123456")
		_ = Older("123455", "opaque")
		_ = Older("abc", "abd")
	})
	assert.Zero(t, allocs)
}
