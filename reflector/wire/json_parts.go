package wire

// A pod's repeated parts in JSON, decoded once per watch stream or list
// page: protobuf_parts.go's idea, for the JSON encoding. Delete this file
// and json_frames.go, and their hooks (the parts and frames fields of
// jsonEventDecoder and their uses in decodeObjectValue, Next and Offset;
// the jd parameter of decodeListWith; newJSONPartsDecoder's two calls in
// listerwatcher.go; json_managed_fields_decode.go goes with them), and the
// package is still correct, only slower: every pod is then decoded whole by
// encoding/json.
//
// Why it pays: encoding/json is most of what a JSON event costs, and the
// pods of one template carry the same containers, volumes, tolerations,
// affinity, labels and owner, byte for byte. The parts are cut out of the
// pod's bytes (json_members.go finds them), the rest is decoded by
// encoding/json, and each part is taken from the cache of protobuf_parts.go
// when its bytes were met before in this stream or page, or else decoded
// alone and kept. BenchmarkWatchDecodeParts and BenchmarkListDecodeParts
// (protobuf_parts_bench_test.go) measure it.
//
// Why it is correct: encoding/json decodes a member's value by the rules
// of the field's type alone, so a part's value decoded by itself into its
// field's type is the value it takes inside the pod, and the pod's other
// members decode alike without it. That holds while each part's member is
// the only member that fills its field, so a pod is split only when every
// key at the levels it is cut at (the pod, its metadata, its spec) is
// plain ASCII without escapes, no key repeats a part's name (encoding/json
// would merge the second value into the first), and no key is a part's
// name in other letter case (encoding/json matches keys without regard to
// case, and "\u0063ontainers" or non-ASCII folds are refused with the
// escapes). A cached part is found by its bytes, compared in full. Any
// other pod, and any pod whose rest or parts do not decode, is decoded
// whole by encoding/json as before, which reports the error: errors are
// exactly encoding/json's. json_parts_test.go compares both decodings on
// realpod's pods, on hand-made tricky ones and by fuzzing.
//
// Why it is safe: as for protobuf (Options.ShareParts; hideParts keeps the
// interning and sharing off a part taken from the cache).
//
// It is bounded: the cache is protobuf_parts.go's (slots, part size,
// budget); the scan keeps nothing but the spans of a page's items, one
// per item counted before decoding (list_item_count.go), and a buffer for
// a pod's rest, given back when larger than retainedFrameBuffer.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jsonPartNames are the parts' JSON keys, in partID order (the json tags
// of ObjectMeta's and PodSpec's fields).
var jsonPartNames = [numParts]string{
	"labels", "annotations", "ownerReferences", "finalizers",
	"volumes", "initContainers", "containers", "nodeSelector", "securityContext",
	"imagePullSecrets", "affinity", "tolerations", "topologySpreadConstraints",
}

// jsonPartsDecoder decodes the pods of one list page or one watch stream
// from JSON, taking their repeated parts from its cache. It is used by one
// goroutine at a time and is not safe for concurrent use.
type jsonPartsDecoder struct {
	skip  *jsonSkip // the target's (json_managed_fields.go), or nil
	cache partsCache
	rest  []byte     // a pod's bytes without its parts; reused
	items []itemSpan // a list's items; reused
	parts [numParts]span
	// managed is the span of the metadata's managedFields when they are
	// cut out too (json_managed_fields_decode.go).
	managed span
}

// newJSONPartsDecoder returns the decoder for t's objects, or nil when
// they are not pods or the caller does not promise to leave decoded
// objects alone (shareParts: relist_reuse.go).
func newJSONPartsDecoder(t *target, shareParts bool) *jsonPartsDecoder {
	if !shareParts || t.itemType != reflect.TypeFor[corev1.Pod]() {
		return nil
	}
	return &jsonPartsDecoder{skip: t.jsonSkip}
}

// decodePod decodes raw, one pod's JSON, into p, a zero Pod, and returns
// the parts p took from the cache, which p shares with other pods.
func (d *jsonPartsDecoder) decodePod(raw []byte, p *corev1.Pod) (partSet, error) {
	hits, ok := d.splitPod(raw, p)
	if cap(d.rest) > retainedFrameBuffer {
		d.rest = nil // a rare huge pod should not pin its memory
	}
	if ok {
		return hits, nil
	}
	d.cache.disown(p)
	*p = corev1.Pod{}
	return 0, json.Unmarshal(raw, d.skip.jsonInto(p))
}

// splitPod is decodePod through the cache. false: raw is not of the shape
// it splits, or does not decode; p is partly filled.
func (d *jsonPartsDecoder) splitPod(raw []byte, p *corev1.Pod) (partSet, bool) {
	if !d.cut(raw) || json.Unmarshal(d.rest, d.skip.jsonInto(p)) != nil {
		return 0, false
	}
	if s := d.managed; s.end != 0 && !decodeManagedFields(s.of(raw), &p.ManagedFields) {
		return 0, false
	}
	var hits partSet
	for id := range numParts {
		s := d.parts[id]
		if s.end == 0 {
			continue
		}
		v, hit, err := d.cache.take(id, s.of(raw), p, decodeJSONPart)
		if err != nil {
			return 0, false
		}
		if hit {
			hits |= 1 << id
		}
		setPart(p, id, v)
	}
	return hits, true
}

// cut copies raw, one pod's JSON object, into d.rest without the members
// of its metadata and spec that are parts, and notes the spans of their
// values in d.parts. false: raw is not a pod whose parts can be cut out
// (see the file's doc).
func (d *jsonPartsDecoder) cut(raw []byte) bool {
	d.parts, d.managed = [numParts]span{}, span{}
	open := skipJSONSpace(raw, 0)
	if open >= len(raw) || raw[open] != '{' {
		return false
	}
	rest := append(d.rest[:0], '{')
	var meta, spec bool
	end, ok := jsonMembers(raw, open, func(m jsonMember) (int, bool) {
		if !plainJSONKey(m.key) {
			return 0, false
		}
		rest = appendMemberSep(rest)
		switch name := string(m.key); {
		case name == "metadata" && !meta:
			meta = true
			return d.cutObject(raw, m, &rest, 0, firstSpecPart)
		case name == "spec" && !spec:
			spec = true
			return d.cutObject(raw, m, &rest, firstSpecPart, numParts)
		case foldsTo(m.key, "metadata") || foldsTo(m.key, "spec"):
			return 0, false
		}
		end, ok := jsonValueEnd(raw, m.value)
		if ok {
			rest = append(rest, raw[m.start:end]...)
		}
		return end, ok
	})
	d.rest = append(rest, '}')
	return ok && skipJSONSpace(raw, end) == len(raw)
}

// cutObject copies member m, the pod's metadata or spec, to *rest without
// its members that are the parts first..last-1, whose spans it notes.
func (d *jsonPartsDecoder) cutObject(raw []byte, m jsonMember, rest *[]byte, first, last partID) (int, bool) {
	if raw[m.value] != '{' {
		return 0, false
	}
	*rest = append(append(*rest, raw[m.start:m.value]...), '{')
	end, ok := jsonMembers(raw, m.value, func(m jsonMember) (int, bool) {
		if !plainJSONKey(m.key) {
			return 0, false
		}
		end, ok := jsonValueEnd(raw, m.value)
		if !ok {
			return 0, false
		}
		for id := first; id < last; id++ {
			switch name := jsonPartNames[id]; {
			case string(m.key) == name && d.parts[id].end == 0:
				d.parts[id] = span{start: m.value, end: end}
				return end, true
			case foldsTo(m.key, name): // a repeat, or another case
				return 0, false
			}
		}
		if first == 0 {
			if cut, ok := d.cutManagedFields(m, end); cut || !ok {
				return end, ok
			}
		}
		*rest = append(appendMemberSep(*rest), raw[m.start:end]...)
		return end, true
	})
	*rest = append(*rest, '}')
	return end, ok
}

// appendMemberSep appends the comma before an object's member to b, which
// holds the object so far: none before its first member.
func appendMemberSep(b []byte) []byte {
	if b[len(b)-1] == '{' {
		return b
	}
	return append(b, ',')
}

// decodeJSONPart decodes one part's JSON value into its field's type,
// allocating that value only (not a pod around it: a part missed is a
// common case under churn).
func decodeJSONPart(id partID, raw []byte) (any, error) {
	switch id {
	case partLabels, partAnnotations, partNodeSelector:
		return decodeJSONAs[map[string]string](raw)
	case partOwnerReferences:
		return decodeJSONAs[[]metav1.OwnerReference](raw)
	case partFinalizers:
		return decodeJSONAs[[]string](raw)
	case partVolumes:
		return decodeJSONAs[[]corev1.Volume](raw)
	case partInitContainers, partContainers:
		return decodeJSONAs[[]corev1.Container](raw)
	case partSecurityContext:
		return decodeJSONAs[*corev1.PodSecurityContext](raw)
	case partImagePullSecrets:
		return decodeJSONAs[[]corev1.LocalObjectReference](raw)
	case partAffinity:
		return decodeJSONAs[*corev1.Affinity](raw)
	case partTolerations:
		return decodeJSONAs[[]corev1.Toleration](raw)
	case partTopologySpread:
		return decodeJSONAs[[]corev1.TopologySpreadConstraint](raw)
	}
	return nil, fmt.Errorf("no part %d", id)
}

func decodeJSONAs[T any](raw []byte) (any, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// decodeList decodes body, a pod list's JSON, into list, a zero PodList,
// and returns the parts each item shares with other items.
func (d *jsonPartsDecoder) decodeList(body []byte, list *corev1.PodList) ([]partSet, error) {
	hits, ok, err := d.splitList(body, list)
	if ok {
		return hits, err
	}
	*list = corev1.PodList{}
	return nil, json.Unmarshal(body, d.skip.jsonInto(list))
}

// splitList is decodeList item by item. false: body is not a list of
// that shape, or does not decode; list is partly filled. An item of a
// wrong type fails the page at once (itemTypeError).
func (d *jsonPartsDecoder) splitList(body []byte, list *corev1.PodList) ([]partSet, bool, error) {
	open := skipJSONSpace(body, 0)
	if open >= len(body) || body[open] != '{' {
		return nil, false, nil
	}
	rest := []byte{'{'} // the list without its items: a few bytes
	d.items = d.items[:0]
	found := false
	end, ok := jsonMembers(body, open, func(m jsonMember) (int, bool) {
		switch {
		case !plainJSONKey(m.key):
			return 0, false
		case string(m.key) == "items" && !found && body[m.value] == '[':
			found = true
			return jsonElements(body, m.value, func(start, end int) bool {
				d.items = append(d.items, itemSpan{start, end})
				return body[start] == '{'
			})
		case foldsTo(m.key, "items"):
			return 0, false
		}
		end, ok := jsonValueEnd(body, m.value)
		if ok {
			rest = append(appendMemberSep(rest), body[m.start:end]...)
		}
		return end, ok
	})
	if !ok || skipJSONSpace(body, end) != len(body) {
		return nil, false, nil
	}
	if json.Unmarshal(append(rest, '}'), d.skip.jsonInto(list)) != nil {
		return nil, false, nil
	}
	if !found {
		return nil, true, nil
	}
	// An empty array decodes as an empty slice, as in encoding/json.
	// The items are made as the body's bytes pay for them, as in the
	// protobuf decoder (itemsBeforeDecoding), and grow as they decode.
	n := len(d.items)
	list.Items = make([]corev1.Pod, 0, itemsBeforeDecoding(n, len(body)))
	hits := make([]partSet, n)
	for i, s := range d.items {
		if i == cap(list.Items) {
			list.Items = slices.Grow(list.Items, min(i, n-i))
			d.cache.disownAll() // the items decoded so far moved
		}
		list.Items = list.Items[:i+1]
		var err error
		if hits[i], err = d.decodePod(s.of(body), &list.Items[i]); err != nil {
			ok, err := itemTypeError(err, list)
			return nil, ok, err
		}
	}
	return hits, true, nil
}

// itemSpan is where a list item's JSON is in the body: 16 bytes an item,
// for pages of up to MaxListItems of them (protobuf's span also counts
// elements, which a JSON item does not need).
type itemSpan struct{ start, end int }

func (s itemSpan) of(body []byte) []byte { return body[s.start:s.end] }

// itemTypeError says how splitList ends on err, an item's error. A type
// error fails the page at once: true, err as encoding/json reports it for
// the whole page (its field path from the list), list emptied. Decoding the
// whole body again would make every item first, as encoding/json goes on
// past a type error to report the first one at the end: a page of a
// million empty items after a bad one would cost a gigabyte. Any other
// error: false, the whole body is decoded again, and encoding/json stops
// where the item did.
func itemTypeError(err error, list *corev1.PodList) (bool, error) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		return false, nil
	}
	te.Field = "items." + te.Field
	*list = corev1.PodList{}
	return true, te
}

// withParts makes d decode pods through parts (nil: none), reading frames
// whole (json_frames.go) until the first frame of another shape.
func (d *jsonEventDecoder) withParts(parts *jsonPartsDecoder) {
	if parts == nil {
		return
	}
	d.parts = parts
	d.frames = &jsonFrames{r: d.limit.r, max: d.limit.max}
}

// decodePod decodes a watch event's object, a pod, through d.parts: its
// bytes are taken whole, then split.
func (d *jsonEventDecoder) decodePod(p *corev1.Pod) error {
	if err := d.readObject(); err != nil {
		return err
	}
	hits, err := d.parts.decodePod(d.raw, p)
	d.last, d.lastHits = p, hits
	return err
}
