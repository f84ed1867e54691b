package wire

// One-pass JSON decoding into unstructured values.
//
// apimachinery decodes an unstructured object with its JSON scheme
// (unstructured.UnstructuredJSONScheme): sigs.k8s.io/json into a
// map[string]interface{}, integers kept as int64. That is what this file
// produces, value for value (unstructured_json_test.go compares the two,
// and fuzzes the comparison). Where it differs is the work:
//
//   - A list is read once. The JSON scheme reads a list body three times:
//     the items as raw messages, the whole body (items included) into a
//     map, then each item again.
//   - A map is made at its final size, once its pairs are read, instead of
//     growing as they arrive.
//   - Keys and short values repeat from object to object ("metadata",
//     "namespace", a label's value): a bounded table per list or per
//     watch stream keeps one copy of each, which the decoded objects
//     share. Strings are immutable, so sharing them is always safe.
//   - So do whole small objects and arrays (a condition, a port list,
//     resources, a managedFields entry, the many {} of fieldsV1). When
//     the caller allows it (Options.ShareValues: nobody modifies decoded
//     objects in place), a second bounded table hands out one map or
//     slice for every later object or array of the same JSON text.
//
// Delete this file and decode with (*unstructured.Unstructured).UnmarshalJSON
// (unstructured.go says where) and the package is still correct, only
// slower and larger (BenchmarkDynamicInformerSync in bench/ measures both
// informers).

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxJSONDepth bounds the nesting of a decoded value, as encoding/json's
// own limit does: a hostile body of a million '[' must not recurse a
// million times.
const maxJSONDepth = 10000

// Bounds of a stringTable: how many strings it keeps at once, and the
// longest it keeps. Longer strings (UIDs, images, messages) rarely repeat
// enough to pay for a lookup.
const (
	stringTableEntries = 4096
	stringTableMaxLen  = 32
)

// stringTable keeps one copy of each short string a decoder has met. It is
// bounded: when full it is emptied, so a server that sends only distinct
// strings costs at most stringTableEntries short strings. It is used by
// one goroutine at a time (one list, or one watch stream).
type stringTable struct {
	m map[string]string
}

// get returns the table's copy of b, keeping one if it has none. Looking a
// []byte up with string(b) does not allocate.
func (t *stringTable) get(b []byte) string {
	if len(b) > stringTableMaxLen {
		return string(b)
	}
	if s, ok := t.m[string(b)]; ok {
		return s
	}
	if t.m == nil {
		t.m = make(map[string]string, 256)
	}
	if len(t.m) >= stringTableEntries {
		clear(t.m)
	}
	s := string(b)
	t.m[s] = s
	return s
}

// Bounds of a valueTable: the longest JSON text of an object or array it
// shares (larger ones are rarely equal), how many texts it remembers, and
// the bytes of the texts it keeps.
const (
	sharedValueMaxLen  = 512
	valueTableEntries  = 4096
	valueTableMaxBytes = 1 << 20
)

// valueTable hands out one map or slice for every object or array of the
// same JSON text: equal text, equal value. A text is kept only the second
// time it is met (the first time only its hash is noted), so that the
// unique parts of every object (its metadata) cost a hash, not a copy.
// Both sets are bounded and emptied when full. It is used by one
// goroutine at a time.
type valueTable struct {
	seed      maphash.Seed
	seen      map[uint64]struct{} // hashes of texts met once
	kept      map[string]any      // texts met twice or more, and their value
	keptBytes int
}

// share returns the table's value for text, or v, which it may keep.
func (t *valueTable) share(text []byte, v any) any {
	if len(text) > sharedValueMaxLen {
		return v
	}
	if old, ok := t.kept[string(text)]; ok {
		return old
	}
	if t.seen == nil {
		t.seed = maphash.MakeSeed()
		t.seen = make(map[uint64]struct{}, 256)
		t.kept = make(map[string]any, 256)
	}
	h := maphash.Bytes(t.seed, text)
	if _, ok := t.seen[h]; !ok {
		if len(t.seen) >= valueTableEntries {
			clear(t.seen)
		}
		t.seen[h] = struct{}{}
		return v
	}
	if len(t.kept) >= valueTableEntries || t.keptBytes+len(text) > valueTableMaxBytes {
		clear(t.kept)
		t.keptBytes = 0
	}
	t.kept[string(text)] = v
	t.keptBytes += len(text)
	return v
}

// jsonValueParser decodes one JSON document held in data into
// unstructured values: map[string]interface{}, []interface{}, string,
// int64 (an integer literal that fits), float64, bool and nil.
type jsonValueParser struct {
	data   []byte
	pos    int
	depth  int
	strs   *stringTable
	values *valueTable // nil: no map or slice is shared
	// pairs and elems are stacks shared by every nested object and array:
	// a container's members wait there until its end is read and the map
	// or slice can be made at its final size.
	pairs []jsonPair
	elems []any
}

type jsonPair struct {
	key string
	val any
}

var errJSONSyntax = errors.New("invalid JSON")

// decodeUnstructuredJSON decodes data, one JSON object, into u. The
// object itself is never shared; its parts may be, through values.
func decodeUnstructuredJSON(data []byte, u *unstructured.Unstructured, strs *stringTable, values *valueTable) error {
	p := jsonValueParser{data: data, strs: strs, values: values}
	m, err := p.document()
	if err != nil {
		return err
	}
	u.Object = m
	return nil
}

// decodeUnstructuredListJSON decodes data, one JSON list, into list in
// one pass: its items become list.Items, the rest list.Object. Items that
// say nothing of their kind get the list's, as apimachinery's JSON scheme
// does (the server leaves them out of typed lists). It returns the list's
// own apiVersion and kind.
func decodeUnstructuredListJSON(data []byte, list *unstructured.UnstructuredList, strs *stringTable, values *valueTable) (apiVersion, kind string, err error) {
	p := jsonValueParser{data: data, strs: strs, values: values}
	m, err := p.document()
	if err != nil {
		return "", "", err
	}
	raw, hasItems := m["items"]
	delete(m, "items")
	list.Object = m
	apiVersion, kind = list.GetAPIVersion(), list.GetKind()
	items, ok := raw.([]any)
	if hasItems && raw != nil && !ok {
		return "", "", fmt.Errorf(`"items" is a %T, not an array`, raw)
	}
	list.Items = make([]unstructured.Unstructured, len(items))
	itemKind := strings.TrimSuffix(kind, "List")
	for i, item := range items {
		obj, ok := item.(map[string]any)
		if !ok {
			return "", "", fmt.Errorf("list item %d is a %T, not an object", i, item)
		}
		u := &list.Items[i]
		u.Object = obj
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetKind(itemKind)
			u.SetAPIVersion(apiVersion)
		}
	}
	return apiVersion, kind, nil
}

// document reads the whole of data: one object, with nothing but
// whitespace around it.
func (p *jsonValueParser) document() (map[string]any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return nil, p.fail("want a JSON object")
	}
	v, err := p.object()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.fail("data after the object")
	}
	return v, nil
}

func (p *jsonValueParser) fail(what string) error {
	return fmt.Errorf("%w at offset %d: %s", errJSONSyntax, p.pos, what)
}

func (p *jsonValueParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonValueParser) value() (any, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		m, err := p.object()
		return m, err
	case c == '[':
		a, err := p.array()
		return a, err
	case c == '"':
		s, err := p.str(false)
		return s, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return p.literal()
}

func (p *jsonValueParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("nested too deeply")
	}
	return nil
}

func (p *jsonValueParser) object() (map[string]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	start := p.pos
	p.pos++ // '{'
	base := len(p.pairs)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return p.sharedObject(start, map[string]any{}), nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("want a key")
		}
		key, err := p.str(true)
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("want ':'")
		}
		p.pos++
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		p.pairs = append(p.pairs, jsonPair{key, val})
		if more, err := p.next('}'); err != nil {
			return nil, err
		} else if !more {
			break
		}
	}
	pairs := p.pairs[base:]
	m := make(map[string]any, len(pairs))
	for _, kv := range pairs { // a repeated key: the last one wins, as in encoding/json
		m[kv.key] = kv.val
	}
	clear(pairs) // let go of the values
	p.pairs = p.pairs[:base]
	return p.sharedObject(start, m), nil
}

// next steps over what follows a member or an element: a ',' (more
// follow) or closing (the end of the object or array).
func (p *jsonValueParser) next(closing byte) (more bool, err error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return false, p.fail("unexpected end")
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return true, nil
	case closing:
		p.pos++
		return false, nil
	}
	return false, p.fail("want ',' or '" + string(closing) + "'")
}

// sharedObject ends an object that began at start: the table's copy of
// an equal one, if it has one and the object is not the document itself.
func (p *jsonValueParser) sharedObject(start int, m map[string]any) map[string]any {
	p.depth--
	if p.values == nil || p.depth == 0 {
		return m
	}
	return p.values.share(p.data[start:p.pos], m).(map[string]any)
}

// sharedArray is sharedObject for an array.
func (p *jsonValueParser) sharedArray(start int, a []any) []any {
	p.depth--
	if p.values == nil {
		return a
	}
	return p.values.share(p.data[start:p.pos], a).([]any)
}

func (p *jsonValueParser) array() ([]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	start := p.pos
	p.pos++ // '['
	base := len(p.elems)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return p.sharedArray(start, []any{}), nil
	}
	for {
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		p.elems = append(p.elems, val)
		if more, err := p.next(']'); err != nil {
			return nil, err
		} else if !more {
			break
		}
	}
	out := make([]any, len(p.elems)-base)
	copy(out, p.elems[base:])
	clear(p.elems[base:])
	p.elems = p.elems[:base]
	return p.sharedArray(start, out), nil
}

// str reads a string. A plain one (printable ASCII, no escapes) is taken
// from data as it is; any other is handed to encoding/json, which knows
// every escape and replaces invalid UTF-8 as apimachinery's decoder does.
// Keys are always shared through the table, values when short.
func (p *jsonValueParser) str(key bool) (string, error) {
	start := p.pos + 1
	i := start
	for i < len(p.data) {
		c := p.data[i]
		if c == '"' {
			p.pos = i + 1
			b := p.data[start:i]
			if p.strs != nil && (key || len(b) <= stringTableMaxLen) {
				return p.strs.get(b), nil
			}
			return string(b), nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return p.slowStr(start)
		}
		i++
	}
	p.pos = len(p.data)
	return "", p.fail("unterminated string")
}

func (p *jsonValueParser) slowStr(start int) (string, error) {
	i := start
	for i < len(p.data) && p.data[i] != '"' {
		if p.data[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(p.data) {
		p.pos = len(p.data)
		return "", p.fail("unterminated string")
	}
	var s string
	if err := json.Unmarshal(p.data[start-1:i+1], &s); err != nil {
		return "", fmt.Errorf("%w at offset %d: %w", errJSONSyntax, start-1, err)
	}
	p.pos = i + 1
	return s, nil
}

// number reads a number by JSON's grammar: an integer literal that fits
// becomes an int64, anything else a float64, as in apimachinery's
// decoding. A number too large for a float64 is an error there too.
func (p *jsonValueParser) number() (any, error) {
	start := p.pos
	d := p.data
	i := start
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		return nil, p.fail("malformed number")
	}
	integer := true
	if i < len(d) && d[i] == '.' {
		integer = false
		if i+1 >= len(d) || d[i+1] < '0' || d[i+1] > '9' {
			return nil, p.fail("malformed number")
		}
		i = digits(d, i+1)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return nil, p.fail("malformed number")
		}
		i = digits(d, i)
	}
	p.pos = i
	s := d[start:i]
	if integer {
		if n, err := strconv.ParseInt(string(s), 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return nil, fmt.Errorf("%w at offset %d: number %s: %w", errJSONSyntax, start, s, err)
	}
	return f, nil
}

func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

func (p *jsonValueParser) literal() (any, error) {
	for _, lit := range [...]struct {
		text string
		val  any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(p.data)-p.pos >= len(lit.text) && string(p.data[p.pos:p.pos+len(lit.text)]) == lit.text {
			p.pos += len(lit.text)
			return lit.val, nil
		}
	}
	return nil, p.fail("unexpected character")
}
