package rvorder

// Older reports whether rv is known to be older than than: both are well
// formed (Comparable) and apimachinery orders rv first. It looks at the
// digits only when the lengths or one string comparison say "older",
// which a healthy watch never does: an rv longer than than, or of its
// length and not below it, cannot be a smaller number.
//
// The first bytes are looked at before the strings are compared: a
// resourceVersion that does not start with a digit from 1 to 9 is not
// well formed, and that test is cheaper than the comparison, which an
// opaque resourceVersion then never pays. Once both are well formed, the
// lengths and the one comparison already are apimachinery's order (a
// shorter number is smaller; of equal lengths, the digits decide), so
// CompareResourceVersion is not called again (TestOlderAgreesWithApimachinery).
func Older(rv, than string) bool {
	switch {
	case len(rv) > len(than):
		return false
	case !leadingDigit(rv) || !leadingDigit(than):
		return false
	case len(rv) == len(than) && rv >= than:
		return false
	}
	return Comparable(rv, than)
}

// leadingDigit reports whether rv starts as a well-formed resourceVersion
// does: with a digit from 1 to 9.
func leadingDigit(rv string) bool {
	return rv != "" && rv[0] >= '1' && rv[0] <= '9'
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
