package wire

// Relists that keep the cached objects (internal/reuse explains why it
// pays). Delete this file and its two calls, in List and Watch, and the
// package is still correct: a relist then hands on every object as decoded.

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/reuse"
)

// reuseListItems replaces, in a decoded list page, each item the caller's
// cache holds unchanged by a shallow copy of the cached object: the page
// then points to the cache's data, and the freshly decoded data is garbage
// at once. The first page of a list begins a relist.
func reuseListItems(ctx context.Context, opts metav1.ListOptions, list runtime.Object) {
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
			c.Decoded(obj)
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
	if initial {
		c.Begin()
	}
	return &reusingDecoder{eventDecoder: dec, cache: c, initial: initial}
}

type reusingDecoder struct {
	eventDecoder
	cache   *reuse.Cache
	initial bool // a WatchList: ADDED objects may be unchanged
}

func (d *reusingDecoder) Next() (watch.Event, error) {
	ev, err := d.eventDecoder.Next()
	if err != nil || (ev.Type != watch.Added && ev.Type != watch.Modified) {
		return ev, err
	}
	if d.initial && ev.Type == watch.Added {
		if cached := d.cache.Unchanged(ev.Object); cached != nil {
			ev.Object = cached
			return ev, nil
		}
	}
	d.cache.Decoded(ev.Object)
	return ev, nil
}
