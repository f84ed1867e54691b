package wire

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// protoDecoder decodes the objects of one list page or one watch stream
// from protobuf, doing less than the generated Unmarshal where its caller
// allows it:
//
//   - drop (Options.DropManagedFields): managedFields are skipped, not
//     decoded only to be dropped by the informer's Transform;
//   - parts (protobuf_parts.go): a pod's repeated parts are decoded once
//     and shared by the pods that repeat them.
//
// Whatever it cannot do that way (bytes of an unusual shape, bytes that do
// not decode) it decodes with the generated Unmarshal, which reports the
// error. A nil *protoDecoder decodes with the generated Unmarshal alone.
// It is used by one goroutine at a time and is not safe for concurrent use.
type protoDecoder struct {
	drop  bool
	parts *partsCache // nil: no part is shared
}

// newProtoDecoder returns the decoder for t's objects, or nil when it
// would do nothing but call the generated Unmarshal. shareParts says that
// decoded objects will never be modified (relist_reuse.go: shareParts).
func newProtoDecoder(t *target, shareParts bool) *protoDecoder {
	d := &protoDecoder{drop: t.dropManagedFields}
	if shareParts && t.itemType == reflect.TypeFor[corev1.Pod]() {
		d.parts = &partsCache{table: t.parts, strs: t.strings}
	}
	if !d.drop && d.parts == nil {
		return nil
	}
	return d
}

// decode decodes raw, one object's protobuf bytes (no envelope), into
// obj, a zero value, and returns the parts obj shares with other objects.
func (d *protoDecoder) decode(raw []byte, obj protoUnmarshaler) (partSet, error) {
	if d == nil {
		return 0, obj.Unmarshal(raw)
	}
	if p, ok := obj.(*corev1.Pod); ok && d.parts != nil {
		if hits, ok := d.parts.decodePod(raw, p, d.drop); ok {
			return hits, nil
		}
		d.parts.disown(p)
	} else if d.drop && decodeWithoutManagedFields(raw, obj) {
		return 0, nil
	}
	// The generated decoder, on a fresh value, decides.
	reflect.ValueOf(obj).Elem().SetZero()
	if err := obj.Unmarshal(raw); err != nil {
		return 0, err
	}
	if d.drop {
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
	}
	return 0, nil
}

// decodeWithoutManagedFields decodes raw into obj, a zero value, skipping
// metadata.managedFields (field 17 of metadata, field 1 of every
// Kubernetes kind). false: obj is partly filled and the caller decodes
// afresh.
func decodeWithoutManagedFields(raw []byte, obj protoUnmarshaler) bool {
	acc, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return false
	}
	om, ok := acc.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return false
	}
	var top [1]span
	if !splitMessage(obj, raw, podFields[:1], 0, top[:]) {
		return false
	}
	if top[0].end == 0 {
		return true
	}
	meta, ok := singleMessage(top[0].of(raw))
	return ok && splitMessage(om, meta, nil, managedFields, nil)
}

// listItems is field 2 of every Kubernetes list kind: its items.
var listItems = []int32{2}

// decodeList decodes raw, a list's protobuf bytes, into list, a zero
// value, item by item through decode, and returns the parts each item
// shares with others (nil when none does).
func (d *protoDecoder) decodeList(raw []byte, list runtime.Object) ([]partSet, error) {
	pu := list.(protoUnmarshaler) // the caller checked
	if d == nil {
		return nil, pu.Unmarshal(raw)
	}
	if hits, ok := d.decodeItems(raw, list, pu); ok {
		return hits, nil
	}
	reflect.ValueOf(list).Elem().SetZero()
	if err := pu.Unmarshal(raw); err != nil {
		return nil, err
	}
	return nil, nil
}

func (d *protoDecoder) decodeItems(raw []byte, list runtime.Object, pu protoUnmarshaler) ([]partSet, bool) {
	items := reflect.ValueOf(list).Elem().FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice || items.Type().Elem().Kind() != reflect.Struct {
		return nil, false
	}
	var s [1]span
	if !splitMessage(pu, raw, listItems, 0, s[:]) {
		return nil, false
	}
	fields := s[0].of(raw)
	n := 0
	for off := 0; off < len(fields); n++ {
		_, size, ok := nextField(fields[off:])
		if !ok {
			return nil, false
		}
		off += size
	}
	if n > 0 { // no items decode as nil, as the generated decoder leaves them
		items.Set(reflect.MakeSlice(items.Type(), 0, itemsBeforeDecoding(n, len(fields))))
	}
	var hits []partSet
	if d.parts != nil {
		hits = make([]partSet, n)
	}
	for i, off := 0, 0; i < n; i++ {
		_, size, _ := nextField(fields[off:])
		val, ok := singleMessage(fields[off : off+size])
		off += size
		d.growItems(items, n)
		item, isProto := items.Index(i).Addr().Interface().(protoUnmarshaler)
		if !ok || !isProto {
			return nil, false
		}
		h, err := d.decode(val, item)
		if err != nil {
			return nil, false
		}
		if hits != nil {
			hits[i] = h
		}
	}
	return hits, true
}

// bytesPerItem is the fewest bytes per item that decodeItems expects of a
// list page when it makes the page's items before decoding them. A real
// pod takes several hundred bytes; an item can be as small as two (an
// empty message), and the generated decoder's items cost over a kilobyte
// each, so a hostile page of n tiny items would otherwise cost n
// kilobytes before its first bad item is seen.
const bytesPerItem = 256

// itemsBeforeDecoding is how many of a page's n items decodeItems makes
// before decoding the first: all of them when fields, the items' bytes,
// hold at least bytesPerItem each (real pages), else as many as the bytes
// pay for. The rest are made as decoding reaches them (growItems).
func itemsBeforeDecoding(n, fieldBytes int) int {
	return min(n, max(fieldBytes/bytesPerItem, 1))
}

// growItems makes room for one more item in items, a slice of at most n,
// and extends it by one zero item. Growing moves the items decoded so far,
// so the parts cache forgets them as the owners of its parts (disownAll):
// an owner's address must be the item the list keeps.
func (d *protoDecoder) growItems(items reflect.Value, n int) {
	l := items.Len()
	if l == items.Cap() {
		items.Grow(min(max(l, 1), n-l))
		if d.parts != nil {
			d.parts.disownAll()
		}
	}
	items.SetLen(l + 1)
}

// withPartsHidden runs f on obj with the parts it shares (hits) hidden:
// f may rewrite obj in place (interning, sharing) without writing to what
// other objects hold too.
func withPartsHidden(obj runtime.Object, hits partSet, f func(runtime.Object)) {
	p, ok := obj.(*corev1.Pod)
	if !ok || hits == 0 {
		f(obj)
		return
	}
	saved := hideParts(p, hits)
	f(p)
	showParts(p, hits, &saved)
}
