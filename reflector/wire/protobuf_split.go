package wire

// Splitting a protobuf message by field number, so that a decoder can skip
// some fields (managedFields, when the informer drops them) or take some
// from elsewhere (a pod's repeated parts: protobuf_parts.go) and leave the
// rest to the generated Unmarshal. It serves those two optimisations only;
// delete them and this file goes too.
//
// Why it is exact: a generated Unmarshal is a loop over the fields of its
// input, in order, and each field number writes one Go field and no other
// (a repeated field appends, a map field inserts, a scalar overwrites, a
// message field merges). It never resets its receiver, so decoding a
// message in runs (the fields before a split-off field, then the fields
// after it) into one value gives what decoding it whole gives, for the
// fields the runs hold. A field split off is then decoded on its own,
// from the bytes of all its occurrences, which is all the generated code
// would have seen of it.

// span is a part of a message: the bytes [start, end), whole fields with
// their keys. splitMessage counts the fields a span holds (count: the
// elements of a repeated field), for protobuf_presize.go.
type span struct{ start, end, count int }

func (s span) of(msg []byte) []byte { return msg[s.start:s.end] }

// splitMessage decodes msg into into, except the fields numbered in nums,
// whose bytes it puts in spans (spans[i] for nums[i]; empty when the field
// is absent), and the fields numbered drop (0: none), which it skips.
//
// It returns false, having decoded part of msg or not, for anything the
// generated decoder should decide alone: a field that does not parse, a
// split-off field whose occurrences are not next to each other (the API
// server writes a repeated field's elements together), or a field that
// the generated decoder refuses. The caller then decodes the whole message
// afresh with the generated Unmarshal, which returns the error to report.
func splitMessage(into protoUnmarshaler, msg []byte, nums []int32, drop int32, spans []span) bool {
	for i := range spans {
		spans[i] = span{}
	}
	run := 0 // where the current run of ordinary fields started
	for off := 0; off < len(msg); {
		num, n, ok := nextField(msg[off:])
		if !ok {
			return false
		}
		i := fieldIndex(nums, num)
		if i < 0 && num != drop {
			off += n
			continue
		}
		if run < off {
			if err := into.Unmarshal(msg[run:off]); err != nil {
				return false
			}
		}
		if i >= 0 {
			switch s := &spans[i]; {
			case s.end == 0:
				*s = span{start: off, end: off + n, count: 1}
			case s.end == off: // the next element
				s.end = off + n
				s.count++
			default:
				return false // elements apart: left to the generated decoder
			}
		}
		off += n
		run = off
	}
	if run < len(msg) {
		if err := into.Unmarshal(msg[run:]); err != nil {
			return false
		}
	}
	return true
}

func fieldIndex(nums []int32, num int32) int {
	for i, n := range nums {
		if n == num {
			return i
		}
	}
	return -1
}

// nextField measures the first field of msg: its number and its length,
// key included. ok is false for a field that does not parse, a group
// (deprecated, never sent by Kubernetes) or a number out of range: the
// generated decoder is left to say what is wrong.
func nextField(msg []byte) (num int32, n int, ok bool) {
	key, k := readVarint(msg)
	if k <= 0 || key>>3 == 0 || key>>3 > 1<<29-1 {
		return 0, 0, false
	}
	num = int32(key >> 3)
	rest := msg[k:]
	switch key & 7 {
	case 0: // varint
		_, m := readVarint(rest)
		if m <= 0 {
			return 0, 0, false
		}
		return num, k + m, true
	case 1: // fixed64
		if len(rest) < 8 {
			return 0, 0, false
		}
		return num, k + 8, true
	case 5: // fixed32
		if len(rest) < 4 {
			return 0, 0, false
		}
		return num, k + 4, true
	case 2: // length-delimited
		l, m := readVarint(rest)
		if m <= 0 || l > uint64(len(rest)-m) {
			return 0, 0, false
		}
		return num, k + m + int(l), true
	}
	return 0, 0, false
}

// singleMessage returns the value of b when b is exactly one
// length-delimited field; ok is false otherwise (a message field sent
// twice is merged by the generated decoder: it decides).
func singleMessage(b []byte) (val []byte, ok bool) {
	key, k := readVarint(b)
	if k <= 0 || key&7 != 2 {
		return nil, false
	}
	l, m := readVarint(b[k:])
	if m <= 0 || l != uint64(len(b)-k-m) {
		return nil, false
	}
	return b[k+m:], true
}
