package wire

// Relists that keep the cached objects (internal/reuse explains why it
// pays). Delete this file, its two calls, in List and Watch, and the
// protobuf decoder's call of peekUnchanged, and the package is still
// correct: a relist then hands on every object as decoded.

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/reuse"
)

// reuseListItems replaces, in a decoded list page, each item the caller's
// cache holds unchanged by a shallow copy of the cached object: the page
// then points to the cache's data, and the freshly decoded data is garbage
// at once. The first page of a list begins a relist.
//
// hits are the parts each item shares with others (protobuf_parts.go),
// which the cache's sharing must leave alone.
func reuseListItems(ctx context.Context, opts metav1.ListOptions, list runtime.Object, hits []partSet) {
	c := reuse.From(ctx)
	if c == nil {
		return
	}
	if opts.Continue == "" {
		c.Begin()
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
		cached := c.Unchanged(obj)
		if cached == nil {
			withPartsHidden(obj, partsOf(hits, i), c.Decoded)
			continue
		}
		if v := reflect.ValueOf(cached); v.Type() == item.Addr().Type() {
			item.Set(v.Elem())
		}
	}
}

// reuseWatch wraps the decoder of a watch made with a cache in its
// context. In a WatchList (a watch that first streams the current state as
// ADDED events) each ADDED object the cache holds unchanged is replaced by
// the cached one; every other added or modified object is prepared
// (reuse.Cache.Decoded), when the cache asks for that.
func reuseWatch(ctx context.Context, opts metav1.ListOptions, dec eventDecoder) eventDecoder {
	c := reuse.From(ctx)
	if c == nil {
		return dec
	}
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if !initial && c.Prepare == nil {
		return dec
	}
	d := &reusingDecoder{eventDecoder: dec, cache: c, initial: initial}
	if initial {
		c.Begin()
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
	cache   *reuse.Cache
	initial bool // a WatchList: ADDED objects may be unchanged
	// peeked is set when the decoder looks each ADDED object up in the
	// cache itself, before decoding it (a protobuf one: peekUnchanged);
	// hit then says whether the current event's object came from there,
	// so that Next asks the cache once per object, not twice.
	peeked, hit bool
}

// peek is the protobuf decoder's cache lookup; it notes whether it hit.
func (d *reusingDecoder) peek(decoded runtime.Object) runtime.Object {
	cached := d.cache.Unchanged(decoded)
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
			if cached := d.cache.Unchanged(ev.Object); cached != nil {
				ev.Object = cached
				return ev, nil
			}
		}
	}
	var hits partSet
	if pd, ok := d.eventDecoder.(*protobufEventDecoder); ok && pd.last == ev.Object {
		hits = pd.lastHits
	}
	withPartsHidden(ev.Object, hits, d.cache.Decoded)
	return ev, nil
}

// shareParts reports whether the objects decoded under ctx may share
// parts with each other (protobuf_parts.go): when the informer that made
// the call shares values at decode time (reuse.Cache.Prepare), which it
// does only when its Transform modifies no map or slice of an object and
// nothing modifies an object once decoded.
func shareParts(ctx context.Context) bool {
	c := reuse.From(ctx)
	return c != nil && c.Prepare != nil
}
