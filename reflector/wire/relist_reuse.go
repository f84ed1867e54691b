package wire

// Relists that keep the cached objects (internal/reuse explains why it
// pays), and the Decoded hook. Delete this file, its two calls, in list and
// watch, the protobuf decoder's call of peekUnchanged, and the Relist and
// Decoded fields of Options, and the package is still correct: a relist
// then hands on every object as decoded.

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// RelistCache is the cache a ListerWatcher's objects go to, as a relist
// sees it (Options.Relist). A relist decodes the whole state again while
// the cache still holds the old one, and most objects have not changed:
// given a RelistCache, the decoders hand on the cached object for each
// one that has not, and the fresh copy is garbage at once. In a protobuf
// WatchList they do not even decode it: they read its identity first.
//
// A list page holds its items by value, so a list item becomes a shallow
// copy of the cached object (its fields point to the cached object's
// data); a WatchList's ADDED event carries the cached object itself. The
// cache's owner must take either back as the object it holds, not as a
// new one to modify: the informer's queue Transform gives back the cached
// object (internal/reuse's Take) and runs no Transform on it.
//
// A ListerWatcher calls it from its List and from each Watch's decoder,
// possibly at once: it must be safe for concurrent use.
type RelistCache interface {
	// Begin is called as a relist starts: at the first page of a List,
	// and at a WatchList. It reports whether the cache may hold any of
	// the relist's objects: false (it holds none, as at an informer's
	// first sync) lets a WatchList's decoder skip looking each object up.
	Begin() bool
	// Unchanged returns the object the cache holds with decoded's
	// namespace, name, UID and resourceVersion, or nil. decoded may hold
	// nothing but those (a *metav1.PartialObjectMetadata read from a
	// protobuf object before it is decoded).
	Unchanged(decoded runtime.Object) runtime.Object
}

// reuseListItems replaces, in a decoded list page, each item the Relist
// cache holds unchanged by a shallow copy of the cached object: the page
// then points to the cache's data, and the freshly decoded data is garbage
// at once. Every other item is given to Decoded. The first page of a list
// begins a relist.
//
// hits are the parts each item shares with others (protobuf_parts.go,
// json_parts.go),
// which Decoded's sharing must leave alone.
func (lw *ListerWatcher) reuseListItems(opts metav1.ListOptions, list runtime.Object, hits []partSet) {
	relist, decoded := lw.opts.Relist, lw.opts.Decoded
	if relist == nil && decoded == nil {
		return
	}
	if relist != nil && opts.Continue == "" {
		relist.Begin()
	}
	items := reflect.ValueOf(list).Elem().FieldByName("Items")
	if items.Kind() != reflect.Slice || items.Type().Elem().Kind() != reflect.Struct {
		return
	}
	for i := range items.Len() {
		item := items.Index(i)
		obj, ok := item.Addr().Interface().(runtime.Object)
		if !ok {
			return
		}
		var cached runtime.Object
		if relist != nil {
			cached = relist.Unchanged(obj)
		}
		if cached == nil {
			if decoded != nil {
				withPartsHidden(obj, partsOf(hits, i), decoded)
			}
			continue
		}
		if v := reflect.ValueOf(cached); v.Type() == item.Addr().Type() {
			item.Set(v.Elem())
		}
	}
}

// reuseWatch wraps the decoder of a watch when Options ask for it. In a
// WatchList (a watch that first streams the current state as ADDED events)
// with a Relist cache, each ADDED object the cache holds unchanged is
// replaced by the cached one; every other added or modified object is
// given to Decoded, when set.
func (lw *ListerWatcher) reuseWatch(opts metav1.ListOptions, dec eventDecoder) eventDecoder {
	relist, decoded := lw.opts.Relist, lw.opts.Decoded
	initial := relist != nil && opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if !initial && decoded == nil {
		return dec
	}
	if initial && !relist.Begin() {
		// An empty cache holds no object unchanged: no ADDED object is
		// looked up (at a first sync, 10k pods read their identity and
		// asked the cache for nothing).
		initial = false
		if decoded == nil {
			return dec
		}
	}
	d := &reusingDecoder{eventDecoder: dec, relist: relist, decoded: decoded, initial: initial}
	if initial {
		if pd, ok := dec.(*protobufEventDecoder); ok {
			d.peeked = true
			pd.unchanged = d.peek
		}
	}
	return d
}

// peekUnchanged reads only the identity of an enveloped protobuf object
// (metadata is field 1 of every built-in kind; name, namespace, uid and
// resourceVersion are its fields 1, 3, 5 and 6, and a field repeated
// takes its last value, as in the generated decoders) and returns what
// unchanged returns for it: the cached object when the cache holds that
// object unchanged, so that a relist does not decode, only to drop, what
// it already has. Decoding such an object allocated about 14 KB (a pod),
// all garbage at once, and the collector counted whatever of it was
// allocated while it marked as live: the relist's peak heap was up to a
// third above the steady state. nil means decode it as usual; so does
// anything that does not parse, for the decoder to report.
func peekUnchanged(raw []byte, unchanged func(runtime.Object) runtime.Object) runtime.Object {
	var m metav1.PartialObjectMetadata
	err := walkProto(raw, func(num int, val []byte) error {
		if num != 1 {
			return nil
		}
		return walkProto(val, func(num int, val []byte) error {
			switch num {
			case 1:
				m.Name = string(val)
			case 3:
				m.Namespace = string(val)
			case 5:
				m.UID = types.UID(val)
			case 6:
				m.ResourceVersion = string(val)
			}
			return nil
		})
	})
	if err != nil || m.UID == "" || m.ResourceVersion == "" {
		return nil
	}
	return unchanged(&m)
}

type reusingDecoder struct {
	eventDecoder
	relist  RelistCache
	decoded func(runtime.Object) // Options.Decoded, or nil
	initial bool                 // a WatchList with a Relist cache: ADDED objects may be unchanged
	// peeked is set when the decoder looks each ADDED object up in the
	// cache itself, before decoding it (a protobuf one: peekUnchanged);
	// hit then says whether the current event's object came from there,
	// so that Next asks the cache once per object, not twice.
	peeked, hit bool
}

// peek is the protobuf decoder's cache lookup; it notes whether it hit.
func (d *reusingDecoder) peek(decoded runtime.Object) runtime.Object {
	cached := d.relist.Unchanged(decoded)
	d.hit = cached != nil
	return cached
}

func (d *reusingDecoder) Next() (watch.Event, error) {
	d.hit = false
	ev, err := d.eventDecoder.Next()
	if err != nil || (ev.Type != watch.Added && ev.Type != watch.Modified) {
		return ev, err
	}
	if d.initial && ev.Type == watch.Added {
		if d.hit {
			return ev, nil // the cached object already
		}
		if !d.peeked {
			if cached := d.relist.Unchanged(ev.Object); cached != nil {
				ev.Object = cached
				return ev, nil
			}
		}
	}
	if d.decoded != nil {
		var hits partSet
		if ps, ok := d.eventDecoder.(partsSharer); ok {
			hits = ps.sharedParts(ev.Object)
		}
		withPartsHidden(ev.Object, hits, d.decoded)
	}
	return ev, nil
}

// shareParts reports whether the objects this ListerWatcher decodes may
// share parts with each other (protobuf_parts.go, json_parts.go): when its caller
// promises that nothing modifies them (Options.ShareParts).
func (lw *ListerWatcher) shareParts() bool { return lw.opts.ShareParts }
