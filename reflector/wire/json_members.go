package wire

// Reading a JSON object's members without decoding them, for
// json_parts.go: where each member's key and value lie in the bytes. Only
// the syntax of the objects and arrays walked (quotes, colons, commas,
// braces) is checked here; a value is stepped over by its strings and
// brackets, and whoever decodes its bytes afterwards (encoding/json)
// checks it. The scan allocates nothing and does not recurse: hostile
// nesting costs a counter, not a stack.

// jsonMember is one member of a JSON object: its key as written (between
// the quotes, escapes left as they are), and where the member (its key's
// opening quote) and its value begin in the bytes.
type jsonMember struct {
	key          []byte
	start, value int
}

// jsonMembers calls f with each member of the object that opens at
// data[open] ('{'), in order; f returns the index just past the member's
// value (jsonValueEnd, or its own walk of the value). jsonMembers returns
// the index just past the object's closing brace, or false when the
// object's own syntax is not JSON's or f returns false.
func jsonMembers(data []byte, open int, f func(m jsonMember) (end int, ok bool)) (int, bool) {
	i := skipJSONSpace(data, open+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for i < len(data) && data[i] == '"' {
		keyEnd := jsonStringEnd(data, i)
		if keyEnd < 0 {
			return 0, false
		}
		m := jsonMember{key: data[i+1 : keyEnd], start: i}
		i = skipJSONSpace(data, keyEnd+1)
		if i >= len(data) || data[i] != ':' {
			return 0, false
		}
		m.value = skipJSONSpace(data, i+1)
		if m.value >= len(data) {
			return 0, false
		}
		end, ok := f(m)
		if !ok {
			return 0, false
		}
		if i = skipJSONSpace(data, end); i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case '}':
			return i + 1, true
		case ',':
			i = skipJSONSpace(data, i+1)
		default:
			return 0, false
		}
	}
	return 0, false
}

// jsonElements calls f with the bounds of each element of the array that
// opens at data[open] ('['), in order, and returns the index just past
// the array's closing bracket, or false as jsonMembers does.
func jsonElements(data []byte, open int, f func(start, end int) bool) (int, bool) {
	i := skipJSONSpace(data, open+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for i < len(data) {
		end, ok := jsonValueEnd(data, i)
		if !ok || !f(i, end) {
			return 0, false
		}
		if i = skipJSONSpace(data, end); i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ']':
			return i + 1, true
		case ',':
			i = skipJSONSpace(data, i+1)
		default:
			return 0, false
		}
	}
	return 0, false
}

// jsonValueEnd returns the index just past the value that begins at
// data[i]: a string to its closing quote, an object or an array to the
// bracket that closes it (brackets counted, of either kind: a mismatch is
// for the decoder to find), anything else to the next delimiter. false:
// the data ends first, or there is no value at i.
func jsonValueEnd(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		end := jsonStringEnd(data, i)
		return end + 1, end >= 0
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				if i = jsonStringEnd(data, i); i < 0 {
					return 0, false
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	start := i
	for i < len(data) && !isJSONDelimiter(data[i]) {
		i++
	}
	return i, i > start
}

func isJSONDelimiter(c byte) bool {
	switch c {
	case ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return isJSONSpace(c)
}

// skipJSONSpace returns the index of the first byte at or after i that is
// not JSON whitespace.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

// plainJSONKey reports whether key, as written, is printable ASCII without
// escapes: then it is its own decoded text, and encoding/json matches it
// to a field name exactly or, failing that, by ASCII case folding.
func plainJSONKey(key []byte) bool {
	for _, c := range key {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}

// foldsTo reports whether the plain key equals name but for ASCII case.
func foldsTo(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if lower(c) != lower(name[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
