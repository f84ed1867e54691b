package wire

import (
	"errors"
	"fmt"
	"github.com/seed31a95821/informer/rest"
)

// A list's cost in memory is set by its number of items more than by its
// size in bytes: "{}," is three bytes on the wire and a whole Go struct
// (a kilobyte for a Pod) once decoded, so 28 MiB of empty items decode
// into ten gigabytes. The reflector's cap on items (MaxListItems) would
// see them only once they exist. So a page's items are counted in its raw
// body first, by a scan that allocates nothing, and a page with more than
// the room left under the cap is refused before a single item is built.

// checkItemCount refuses, with an error wrapping ErrTooManyItems, a list
// body of mediaType that holds more than maxItems items, and, with one
// wrapping ErrMalformedObject, a protobuf list whose fields cannot be
// walked (and so cannot be counted). A JSON body that is not valid JSON
// is counted as well as it can be: the decoder refuses it next.
func checkItemCount(mediaType string, body []byte, maxItems int) error {
	// Every item takes at least two bytes of the body (an element and a
	// comma; a protobuf field key and length), so a cap above half the
	// body cannot be reached: ordinary pages are not scanned at all. A
	// CBOR item takes one byte at least, and its array says its length.
	if mediaType == rest.ContentTypeCBOR {
		if maxItems >= len(body) {
			return nil
		}
		n, err := countCBORItems(body) // unstructured_cbor.go
		if err != nil {
			return fmt.Errorf("%w: counting list items: %w", ErrMalformedObject, err)
		}
		if n > maxItems {
			return fmt.Errorf("%w: more than %d items in one page", ErrTooManyItems, maxItems)
		}
		return nil
	}
	if maxItems >= len(body)/2+1 {
		return nil
	}
	var n int
	if mediaType == rest.ContentTypeProtobuf {
		var err error
		if n, err = countProtobufItems(body, maxItems); err != nil {
			return fmt.Errorf("%w: counting list items: %w", ErrMalformedObject, err)
		}
	} else {
		n = countJSONItems(body, maxItems)
	}
	if n > maxItems {
		return fmt.Errorf("%w: more than %d items in one page", ErrTooManyItems, maxItems)
	}
	return nil
}

// countJSONItems counts the elements of the arrays that are members of
// body's top-level object, and stops as soon as there are more than max.
// In a list the only such array is "items". Every top-level array counts,
// whatever its key, because encoding/json matches keys without regard to
// case (and to some Unicode folding): "ITEMS" fills Items too, and
// telling which key it takes for Items would mean redoing its matching.
// A list has no other top-level array, so nothing honest is over-counted.
//
// The scan tracks only nesting and strings: elements are the commas at
// depth 2 inside such an array, plus one for a non-empty array.
func countJSONItems(body []byte, max int) int {
	n, depth := 0, 0
	inArray := false // the container at depth 2 is an array member of the top object
	empty := false   // that array has no element yet
	for i := 0; i < len(body); i++ {
		c := body[i]
		if depth == 2 && inArray {
			switch {
			case c == ',':
				n++
			case empty && c != ']' && !isJSONSpace(c):
				n, empty = n+1, false
			}
			if n > max {
				return n
			}
		}
		switch c {
		case '"':
			end := jsonStringEnd(body, i)
			if end < 0 {
				return n
			}
			i = end
		case '{', '[':
			depth++
			if depth == 2 {
				inArray, empty = c == '[', true
			}
		case '}', ']':
			depth--
		}
	}
	return n
}

// jsonStringEnd returns the index of the quote that closes the string
// opened at body[open], or -1 when the body ends first. A backslash
// escapes the byte after it (a \uXXXX escape has no quote in it to
// mistake). A plain loop: most strings are a few bytes long, which a
// byte at a time walks faster than a call to bytes.IndexByte would.
func jsonStringEnd(body []byte, open int) int {
	for i := open + 1; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func isJSONSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// countProtobufItems counts the items of an enveloped protobuf list: every
// occurrence of field 2 (items, in every Kubernetes List message) in the
// envelope's raw message, stopping as soon as there are more than max.
// The generated Unmarshal skips fields it does not know, in forms (groups)
// walkProto does not follow; a list that uses them is refused rather
// than left uncounted.
func countProtobufItems(body []byte, max int) (int, error) {
	env, err := parseProtoEnvelope(body)
	if err != nil {
		return 0, err
	}
	n := 0
	err = walkProto(env.raw, func(num int, _ []byte) error {
		if num == listItemsField {
			if n++; n > max {
				return errCounted
			}
		}
		return nil
	})
	if err == errCounted {
		return n, nil
	}
	return n, err
}

// listItemsField is the protobuf field number of Items in every
// Kubernetes List type (ListMeta is 1).
const listItemsField = 2

// errCounted stops a walk that has counted enough.
var errCounted = errors.New("counted past the cap")
