package wire

// Skipping managedFields in JSON, for a ListerWatcher whose caller drops
// them (Options.DropManagedFields). Delete this file and its hooks (the
// jsonSkip field of target, set in New, and jsonInto's calls), and the
// package is still correct, only slower: managedFields are then decoded,
// and dropped after (dropManagedFields).
//
// Why it pays: managedFields are a fifth to two fifths of a pod's bytes,
// and encoding/json decodes them into many small values (times, strings,
// a copy of every fieldsV1 document) that the informer's Transform then
// throws away. encoding/json cannot be told to skip one key, but it skips
// a value whose type's UnmarshalJSON ignores it: the skipping types below
// are the object's own types with ObjectMeta.ManagedFields of such a type,
// built once per ListerWatcher with reflect.StructOf.
//
// Why it is sound: the skipping type of T has T's fields, names, tags and
// types, but for one slice field whose type has the same underlying type;
// so both have one memory layout, checked field by field when the type is
// built (else nothing is skipped), and a *T may be decoded through as a
// pointer to its skipping type (unsafe.Pointer rule 1). The decoding rules
// are encoding/json's for every other field, as before.

import (
	"encoding/json"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// skippedManagedFields is ObjectMeta.ManagedFields as the skipping types
// declare it: its JSON value is read past, never decoded.
type skippedManagedFields []metav1.ManagedFieldsEntry

// UnmarshalJSON ignores the value: encoding/json has already checked that
// it is well-formed JSON.
func (*skippedManagedFields) UnmarshalJSON([]byte) error { return nil }

// jsonSkip holds a target's skipping types; nil when it has none.
type jsonSkip struct {
	item, list         reflect.Type // the target's struct types
	skipItem, skipList reflect.Type // theirs with managedFields skipped
}

// newJSONSkip builds the skipping types of item and list (the struct
// types), or returns nil when either has a shape it does not know.
func newJSONSkip(item, list reflect.Type) *jsonSkip {
	meta := skippingType(reflect.TypeFor[metav1.ObjectMeta](), "ManagedFields", reflect.TypeFor[skippedManagedFields]())
	if meta == nil {
		return nil
	}
	s := &jsonSkip{item: item, list: list, skipItem: skippingType(item, "ObjectMeta", meta)}
	if s.skipItem == nil {
		return nil
	}
	items, ok := list.FieldByName("Items")
	if !ok || items.Type.Kind() != reflect.Slice || items.Type.Elem() != item {
		return nil
	}
	if s.skipList = skippingType(list, "Items", reflect.SliceOf(s.skipItem)); s.skipList == nil {
		return nil
	}
	return s
}

// skippingType returns t with its field name of type with, or nil when t
// is not a struct of exported fields or with would change its layout.
func skippingType(t reflect.Type, name string, with reflect.Type) (s reflect.Type) {
	if t.Kind() != reflect.Struct {
		return nil
	}
	fields := make([]reflect.StructField, t.NumField())
	found := false
	for i := range fields {
		f := t.Field(i)
		if !f.IsExported() {
			return nil
		}
		anonymous := f.Anonymous
		if tagName, _, _ := strings.Cut(f.Tag.Get("json"), ","); tagName != "" {
			// encoding/json treats an embedded struct with a name in its
			// tag as a field of that name, and StructOf embeds only some
			// types: such a field is declared as named.
			anonymous = false
		}
		if f.Name == name {
			if f.Type.Size() != with.Size() || f.Type.Align() != with.Align() {
				return nil
			}
			f.Type, found = with, true
		}
		fields[i] = reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag, Anonymous: anonymous}
	}
	if !found {
		return nil
	}
	defer func() {
		if recover() != nil { // a shape StructOf does not build: skip nothing
			s = nil
		}
	}()
	s = reflect.StructOf(fields)
	if s.Size() != t.Size() || s.Align() != t.Align() {
		return nil
	}
	for i := range fields {
		if s.Field(i).Offset != t.Field(i).Offset {
			return nil
		}
	}
	return s
}

// jsonInto returns what to decode obj's JSON into: obj itself, or obj
// seen as its skipping type when it is a pointer to the target's item or
// list type.
func (s *jsonSkip) jsonInto(obj any) any {
	if s == nil {
		return obj
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return obj
	}
	switch v.Type().Elem() {
	case s.item:
		return reflect.NewAt(s.skipItem, v.UnsafePointer()).Interface()
	case s.list:
		return reflect.NewAt(s.skipList, v.UnsafePointer()).Interface()
	}
	return obj
}

var _ json.Unmarshaler = (*skippedManagedFields)(nil)
