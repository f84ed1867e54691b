package wire

import (
	"bytes"
	"errors"
	"fmt"
)

// Kubernetes does not send bare protobuf. An object on the wire is
//
//	"k8s\x00" magic | runtime.Unknown{ typeMeta{apiVersion, kind}, raw, contentEncoding, contentType }
//
// where raw holds the object's own protobuf bytes. A watch frame is a 4-byte
// big-endian length followed by a metav1.WatchEvent{type, object{raw}} with
// no magic, whose object.raw is an enveloped object as above.
//
// The generated Unmarshal methods of runtime.Unknown and metav1.WatchEvent
// copy every bytes field, so going through them would copy each event's
// object twice before decoding it. The envelopes hold only a handful of
// fields, so we walk them by hand and keep sub-slices of the frame: the
// object's bytes are then touched exactly once, by the object's Unmarshal.
// That is safe because generated Unmarshal methods copy strings and bytes
// out of their input, so the frame buffer can be reused for the next frame.

// protobufMagic prefixes every enveloped Kubernetes protobuf object.
var protobufMagic = []byte("k8s\x00")

var errProtoTruncated = errors.New("protobuf field runs past the end of its message")

// protoEnvelope is a runtime.Unknown whose byte fields alias the input.
type protoEnvelope struct {
	apiVersion, kind []byte
	raw              []byte
	contentEncoding  []byte
	contentType      []byte
}

// parseProtoEnvelope splits a magic-prefixed object into its envelope fields.
func parseProtoEnvelope(data []byte) (protoEnvelope, error) {
	var env protoEnvelope
	if !bytes.HasPrefix(data, protobufMagic) {
		return env, errors.New("missing the k8s protobuf magic prefix")
	}
	err := walkProto(data[len(protobufMagic):], func(num int, val []byte) error {
		switch num {
		case 1: // typeMeta
			return walkProto(val, func(num int, val []byte) error {
				switch num {
				case 1:
					env.apiVersion = val
				case 2:
					env.kind = val
				}
				return nil
			})
		case 2:
			env.raw = val
		case 3:
			env.contentEncoding = val
		case 4:
			env.contentType = val
		}
		return nil
	})
	return env, err
}

// parseProtoWatchEvent splits a raw (unprefixed) metav1.WatchEvent into its
// type and the enveloped object bytes.
func parseProtoWatchEvent(data []byte) (eventType, object []byte, err error) {
	err = walkProto(data, func(num int, val []byte) error {
		switch num {
		case 1:
			eventType = val
		case 2: // runtime.RawExtension{raw = 1}
			return walkProto(val, func(num int, val []byte) error {
				if num == 1 {
					object = val
				}
				return nil
			})
		}
		return nil
	})
	return eventType, object, err
}

// walkProto calls visit for every length-delimited field of msg, in order,
// and skips scalar fields (the envelopes we read have none we need).
func walkProto(msg []byte, visit func(num int, val []byte) error) error {
	for len(msg) > 0 {
		key, n := readVarint(msg)
		if n <= 0 {
			return errors.New("bad protobuf field key")
		}
		msg = msg[n:]
		num, wireType := int(key>>3), key&7
		var val []byte
		switch wireType {
		case 0: // varint
			if _, n = readVarint(msg); n <= 0 {
				return errors.New("bad protobuf varint")
			}
			msg = msg[n:]
			continue
		case 1, 5: // fixed64, fixed32
			size := 8
			if wireType == 5 {
				size = 4
			}
			if len(msg) < size {
				return errProtoTruncated
			}
			msg = msg[size:]
			continue
		case 2: // length-delimited
			l, n := readVarint(msg)
			if n <= 0 || l > uint64(len(msg)-n) {
				return errProtoTruncated
			}
			val, msg = msg[n:n+int(l)], msg[n+int(l):]
		default:
			return fmt.Errorf("unsupported protobuf wire type %d", wireType)
		}
		if err := visit(num, val); err != nil {
			return err
		}
	}
	return nil
}

// readVarint decodes a base-128 varint. n is the number of bytes used, or
// 0 when b ends first, or -1 when the varint is longer than 10 bytes.
func readVarint(b []byte) (v uint64, n int) {
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
