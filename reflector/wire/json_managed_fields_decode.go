package wire

// A pod's managedFields read from JSON by hand, for json_parts.go. Delete
// this file and its two hooks (cutObject's call of cutManagedFields and
// splitPod's of decodeManagedFields), and the package is still correct,
// only slower: managedFields are then decoded by encoding/json with the
// rest of the pod.
//
// Why it pays: managedFields are about a third of a pod's bytes left after
// its parts are cut out, and encoding/json spends on them about a third of
// the time it takes over that rest: it checks every byte of the fieldsV1
// documents, steps over them again to hand them to FieldsV1.UnmarshalJSON,
// and decodes each time by a second json.Unmarshal inside
// Time.UnmarshalJSON. Every entry the API server writes has the same seven
// keys, plain strings, an RFC 3339 time and a fieldsV1 object: read here,
// the fieldsV1 document is checked once (json.Valid) and copied, and the
// rest is a few string copies and one time.Parse.
// BenchmarkWatchDecodeParts and BenchmarkListDecodeParts measure it.
//
// Why it is correct: managedFields is cut out of the metadata as a part is
// (the same rules: plain keys, none repeating "managedFields" or naming it
// in other letter case), and decoded alone into ObjectMeta.ManagedFields'
// type, which is what encoding/json does with it inside the pod. The hand
// reader takes only what it can read as encoding/json would: an array of
// objects whose keys are the entry's own seven, each once, spelled exactly,
// whose strings are printable ASCII without escapes (their bytes are then
// their value), whose time parses as Time.UnmarshalJSON parses it and whose
// fieldsV1 is a valid JSON object (handed to FieldsV1.UnmarshalJSON as
// encoding/json hands it: from its brace to its brace). Anything else (a
// null, an escape, an unknown or repeated key, a number where a string
// goes) goes to encoding/json, and a value that does not decode there
// makes splitPod decode the pod whole, whose error is then exactly
// encoding/json's. json_managed_fields_decode_test.go compares both.
//
// It is bounded: it reads the bytes once to their end, allocates only what
// it returns (at most one entry for every object in the bytes), and does
// not recurse.

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// managedFieldsKey is ObjectMeta.ManagedFields' JSON key.
const managedFieldsKey = "managedFields"

// cutManagedFields notes the span of m's value, a member of a pod's
// metadata ending at end, when m is its managedFields and d decodes them
// (not when the target skips them: json_managed_fields.go). cut: m is
// cut out of the rest; ok false: the pod is not of the shape split.
func (d *jsonPartsDecoder) cutManagedFields(m jsonMember, end int) (cut, ok bool) {
	switch {
	case d.skip != nil:
		return false, true
	case string(m.key) == managedFieldsKey && d.managed.end == 0:
		d.managed = span{start: m.value, end: end}
		return true, true
	case foldsTo(m.key, managedFieldsKey): // a repeat, or another case
		return false, false
	}
	return false, true
}

// decodeManagedFields decodes raw, a pod's managedFields value, into *dst,
// nil: by hand when it can, else by encoding/json. false: it does not
// decode.
func decodeManagedFields(raw []byte, dst *[]metav1.ManagedFieldsEntry) bool {
	if entries, ok := readManagedFields(raw); ok {
		*dst = entries
		return true
	}
	return json.Unmarshal(raw, dst) == nil
}

// readManagedFields reads raw, a JSON array of managedFields entries,
// as encoding/json decodes it into []metav1.ManagedFieldsEntry; false
// when raw is not of the plain shape it reads (see the file's doc).
func readManagedFields(raw []byte) ([]metav1.ManagedFieldsEntry, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var buf [4]metav1.ManagedFieldsEntry // what a pod has, without growing
	entries := buf[:0]
	i := skipJSONSpace(raw, 1)
	if i < len(raw) && raw[i] == ']' {
		return []metav1.ManagedFieldsEntry{}, skipJSONSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) && raw[i] == '{' {
		var e metav1.ManagedFieldsEntry
		end, ok := readManagedFieldsEntry(raw, i, &e)
		if !ok {
			return nil, false
		}
		entries = append(entries, e)
		if i = skipJSONSpace(raw, end); i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ']':
			if skipJSONSpace(raw, i+1) != len(raw) {
				return nil, false
			}
			// Off the stack, at its exact size, as encoding/json's (it
			// grows a slice from empty one element at a time).
			return append([]metav1.ManagedFieldsEntry(nil), entries...), true
		case ',':
			i = skipJSONSpace(raw, i+1)
		default:
			return nil, false
		}
	}
	return nil, false
}

// The keys of a managedFields entry, as bits of the set seen.
const (
	mfManager = 1 << iota
	mfOperation
	mfAPIVersion
	mfTime
	mfFieldsType
	mfFieldsV1
	mfSubresource
)

// readManagedFieldsEntry reads the entry whose object opens at raw[open]
// into e, a zero entry, and returns the index just past it.
func readManagedFieldsEntry(raw []byte, open int, e *metav1.ManagedFieldsEntry) (int, bool) {
	seen := 0
	return jsonMembers(raw, open, func(m jsonMember) (int, bool) {
		var key int
		var str *string
		switch string(m.key) {
		case "manager":
			key, str = mfManager, &e.Manager
		case "operation":
			key, str = mfOperation, (*string)(&e.Operation)
		case "apiVersion":
			key, str = mfAPIVersion, &e.APIVersion
		case "fieldsType":
			key, str = mfFieldsType, &e.FieldsType
		case "subresource":
			key, str = mfSubresource, &e.Subresource
		case "time":
			key = mfTime
		case "fieldsV1":
			key = mfFieldsV1
		default:
			return 0, false
		}
		if seen&key != 0 {
			return 0, false
		}
		seen |= key
		switch key {
		case mfTime:
			s, end, ok := plainJSONString(raw, m.value)
			if !ok {
				return 0, false
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return 0, false
			}
			e.Time = &metav1.Time{Time: t.Local()} // as Time.UnmarshalJSON
			return end, true
		case mfFieldsV1:
			end, ok := fieldsV1End(raw, m.value)
			if !ok {
				return 0, false
			}
			e.FieldsV1 = new(metav1.FieldsV1)
			return end, e.FieldsV1.UnmarshalJSON(raw[m.value:end]) == nil
		}
		s, end, ok := plainJSONString(raw, m.value)
		*str = s
		return end, ok
	})
}

// plainJSONString returns the string that opens at raw[i] and the index
// just past it, when it is printable ASCII without escapes (its bytes are
// then its value); false for any other value.
func plainJSONString(raw []byte, i int) (string, int, bool) {
	if raw[i] != '"' {
		return "", 0, false
	}
	end := jsonStringEnd(raw, i)
	if end < 0 || !plainJSONKey(raw[i+1:end]) {
		return "", 0, false
	}
	return string(raw[i+1 : end]), end + 1, true
}

// fieldsV1End returns the index just past the JSON object that opens at
// raw[i], when it is valid JSON; false when it is not, or is no object.
func fieldsV1End(raw []byte, i int) (int, bool) {
	if raw[i] != '{' {
		return 0, false
	}
	if end, ok := objectsOfObjectsEnd(raw, i); ok {
		return end, true
	}
	end, ok := jsonValueEnd(raw, i)
	return end, ok && json.Valid(raw[i:end])
}

// maxPlainDepth bounds the nesting objectsOfObjectsEnd reads (encoding/json
// refuses more than 10,000 levels; a fieldsV1 document has a few).
const maxPlainDepth = 100

// objectsOfObjectsEnd returns the index just past the object that opens
// at raw[i] when every member's value in it is again such an object, and
// every key a string of printable ASCII whose escapes are among \", \\,
// \/, \b, \f, \n, \r and \t: a fieldsV1 document's shape, valid JSON
// (a subset of its grammar). false says nothing about other values: it is
// a quick check for the usual document, in one pass, where json.Valid's
// scanner takes several times longer.
func objectsOfObjectsEnd(raw []byte, i int) (int, bool) {
	depth := 0
	for { // i is at a value, which must open an object
		if i >= len(raw) || raw[i] != '{' || depth == maxPlainDepth {
			return 0, false
		}
		depth++
		i = skipJSONSpace(raw, i+1)
		if i < len(raw) && raw[i] != '}' {
			if i = plainKeyMember(raw, i); i < 0 {
				return 0, false
			}
			continue
		}
		for { // raw[i] closes an object
			if i >= len(raw) || raw[i] != '}' {
				return 0, false
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
			i = skipJSONSpace(raw, i+1)
			if i < len(raw) && raw[i] == ',' {
				if i = plainKeyMember(raw, skipJSONSpace(raw, i+1)); i < 0 {
					return 0, false
				}
				break
			}
		}
	}
}

// plainKeyMember reads a member's key at raw[i] and its colon, and
// returns the index of its value; -1 when the key is not a string as
// objectsOfObjectsEnd takes them, or no colon follows.
func plainKeyMember(raw []byte, i int) int {
	if i >= len(raw) || raw[i] != '"' {
		return -1
	}
	for i++; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			i = skipJSONSpace(raw, i+1)
			if i >= len(raw) || raw[i] != ':' {
				return -1
			}
			return skipJSONSpace(raw, i+1)
		case c == '\\':
			if i++; i >= len(raw) {
				return -1
			}
			switch raw[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			default:
				return -1
			}
		case c < 0x20 || c > 0x7e:
			return -1
		}
	}
	return -1
}
