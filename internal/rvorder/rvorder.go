package rvorder

import "k8s.io/apimachinery/pkg/util/resourceversion"

// Older reports whether rv is known to be older than than: both are well
// formed (Comparable) and apimachinery orders rv first. It looks at the
// digits only when the lengths or one string comparison say "older",
// which a healthy watch never does: an rv longer than than, or of its
// length and not below it, cannot be a smaller number.
func Older(rv, than string) bool {
	switch {
	case len(rv) > len(than):
		return false
	case len(rv) == len(than) && rv >= than:
		return false
	case !Comparable(rv, than):
		return false
	}
	c, err := resourceversion.CompareResourceVersion(rv, than)
	return err == nil && c < 0
}

// Comparable reports whether apimachinery compares a and b: both are
// decimal numbers without a leading zero. It allocates nothing.
func Comparable(a, b string) bool {
	return wellFormed(a) && wellFormed(b)
}

func wellFormed(rv string) bool {
	if rv == "" || rv[0] == '0' {
		return false
	}
	for i := 0; i < len(rv); i++ {
		if rv[i] < '0' || rv[i] > '9' {
			return false
		}
	}
	return true
}
