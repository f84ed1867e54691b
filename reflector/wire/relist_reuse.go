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

// reuseInitialEvents wraps the decoder of a WatchList (a watch that first
// streams the current state as ADDED events) so that each ADDED object the
// cache holds unchanged is replaced by the cached one. Other watches are
// left as they are.
func reuseInitialEvents(ctx context.Context, opts metav1.ListOptions, dec eventDecoder) eventDecoder {
	c := reuse.From(ctx)
	if c == nil || opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
		return dec
	}
	c.Begin()
	return &reusingDecoder{eventDecoder: dec, cache: c}
}

type reusingDecoder struct {
	eventDecoder
	cache *reuse.Cache
}

func (d *reusingDecoder) Next() (watch.Event, error) {
	ev, err := d.eventDecoder.Next()
	if err == nil && ev.Type == watch.Added {
		if cached := d.cache.Unchanged(ev.Object); cached != nil {
			ev.Object = cached
		} else {
			d.cache.Decoded(ev.Object)
		}
	}
	return ev, err
}
