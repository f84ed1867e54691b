package apply

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The approximation: where the real machinery (Managers) cannot be used
// (no field manager can be built for the type, or it fails on the object),
// Record writes entries of the real shape with approximate field sets: a
// field is owned by the last writer that changed it, lists are owned as a
// whole, and, as with the real machinery, a write takes the fields it
// changes away from every other manager.

// maxFieldManagerLength is the real server's limit on a manager's name.
const maxFieldManagerLength = 128

// ManagerName names the writer of a request as the real server does: the
// fieldManager query parameter, else the User-Agent up to its first '/'
// ("kubectl" for "kubectl/v1.37.2 (linux/amd64)", "Go-http-client" for Go's
// default), without unprintable characters, cut to 128 bytes.
func ManagerName(r *http.Request) string {
	if m := r.URL.Query().Get("fieldManager"); m != "" {
		return m
	}
	product, _, _ := strings.Cut(r.UserAgent(), "/")
	var b strings.Builder
	for _, c := range product {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > maxFieldManagerLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Writer names a write for managedFields: its field manager, the
// apiVersion it wrote in, and the subresource it wrote through ("" for the
// object itself).
type Writer struct {
	Manager     string
	APIVersion  string
	Subresource string
}

// Record sets obj's managedFields, approximately, for a write by w at now.
// live is the stored object (nil for a create). As on the
// real server, managedFields sent by the client replace the stored ones
// (that is how a client resets them), unless they are empty or the write is
// to a subresource, in which case the stored ones are kept: a client that
// does not know about managedFields cannot erase them by accident.
func Record(obj, live runtime.Object, w Writer, now time.Time) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	entries := m.GetManagedFields()
	if live != nil && (len(entries) == 0 || w.Subresource != "") {
		lm, _ := meta.Accessor(live)
		entries = lm.GetManagedFields()
	}
	newDoc, err := fieldsDocument(obj, w.Subresource)
	if err != nil {
		return err
	}
	var owned map[string]any
	if live == nil {
		owned = fieldSet(newDoc, 0)
	} else {
		oldDoc, err := fieldsDocument(live, w.Subresource)
		if err != nil {
			return err
		}
		owned = changedFields(oldDoc, newDoc, 0)
	}
	if len(owned) == 0 {
		// Nothing changed: the entries stay as they were, time included,
		// so that a no-op update stays a no-op (no new resourceVersion).
		m.SetManagedFields(entries)
		return nil
	}
	entries, err = mergeEntry(entries, metav1.ManagedFieldsEntry{
		Manager:     w.Manager,
		Operation:   metav1.ManagedFieldsOperationUpdate,
		APIVersion:  w.APIVersion,
		Time:        &metav1.Time{Time: now.Truncate(time.Second)},
		FieldsType:  "FieldsV1",
		Subresource: w.Subresource,
	}, owned)
	if err != nil {
		return err
	}
	m.SetManagedFields(entries)
	return nil
}

// mergeEntry adds owned to the entry of the same manager, operation,
// apiVersion and subresource (creating it), takes owned away from every
// other entry (dropping those left with nothing), and returns the new
// list. The list is a copy: the stored object's entries are never
// modified.
func mergeEntry(entries []metav1.ManagedFieldsEntry, e metav1.ManagedFieldsEntry, owned map[string]any) ([]metav1.ManagedFieldsEntry, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries)+1)
	merged := false
	for _, old := range entries {
		same := old.Manager == e.Manager && old.Operation == e.Operation &&
			old.APIVersion == e.APIVersion && old.Subresource == e.Subresource
		if !same || merged {
			if kept, ok := withoutFields(old, owned); ok {
				out = append(out, kept)
			}
			continue
		}
		if old.FieldsV1 != nil {
			var prev map[string]any
			if json.Unmarshal(old.FieldsV1.Raw, &prev) == nil {
				owned = unionFields(prev, owned)
			}
		}
		merged = true
	}
	raw, err := json.Marshal(owned)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	return append(out, e), nil
}

// fieldsDocument is the part of obj a manager can own, as generic JSON: for
// the object, everything but status and the server-owned metadata; for the
// status subresource, only status.
func fieldsDocument(obj runtime.Object, subresource string) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if subresource == "status" {
		return map[string]any{"status": doc["status"]}, nil
	}
	delete(doc, "kind")
	delete(doc, "apiVersion")
	delete(doc, "status")
	if md, ok := doc["metadata"].(map[string]any); ok {
		kept := map[string]any{}
		for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
			if v, ok := md[k]; ok {
				kept[k] = v
			}
		}
		if len(kept) == 0 {
			delete(doc, "metadata")
		} else {
			doc["metadata"] = kept
		}
	}
	return doc, nil
}

// fieldSet turns a JSON document into the FieldsV1 form: every key k
// becomes "f:k"; an object nested in a top-level field (metadata.labels,
// spec.selector) also owns itself, as ".": {}; lists and scalars are leaves.
// depth is 0 for the document, 1 for its top-level fields.
func fieldSet(doc map[string]any, depth int) map[string]any {
	set := make(map[string]any, len(doc)+1)
	if depth >= 2 {
		set["."] = map[string]any{}
	}
	for k, v := range doc {
		if child, ok := v.(map[string]any); ok {
			set["f:"+k] = fieldSet(child, depth+1)
		} else {
			set["f:"+k] = map[string]any{}
		}
	}
	return set
}

// changedFields is the field set of what new sets differently from old;
// depth as for fieldSet.
func changedFields(old, new map[string]any, depth int) map[string]any {
	set := map[string]any{}
	for k, v := range new {
		prev, existed := old[k]
		if existed && reflect.DeepEqual(prev, v) {
			continue
		}
		child, isMap := v.(map[string]any)
		prevChild, wasMap := prev.(map[string]any)
		switch {
		case isMap && wasMap:
			if sub := changedFields(prevChild, child, depth+1); len(sub) > 0 {
				set["f:"+k] = sub
			}
		case isMap:
			set["f:"+k] = fieldSet(child, depth+1)
		default:
			set["f:"+k] = map[string]any{}
		}
	}
	return set
}

// unionFields merges two field sets.
func unionFields(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		av, _ := out[k].(map[string]any)
		bv, _ := v.(map[string]any)
		if av != nil && bv != nil {
			out[k] = unionFields(av, bv)
		} else {
			out[k] = v
		}
	}
	return out
}

// withoutFields returns e without the fields of taken, and false when it
// is left owning nothing. An entry whose fields cannot be read is kept
// as it is.
func withoutFields(e metav1.ManagedFieldsEntry, taken map[string]any) (metav1.ManagedFieldsEntry, bool) {
	var set map[string]any
	if e.FieldsV1 == nil || json.Unmarshal(e.FieldsV1.Raw, &set) != nil {
		return e, true
	}
	if !subtractFields(set, taken) {
		return e, true
	}
	if len(set) == 0 {
		return e, false
	}
	raw, err := json.Marshal(set)
	if err != nil {
		return e, true
	}
	e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	return e, true
}

// subtractFields removes from set, in place, the fields of taken: a leaf
// of taken (an empty set) removes the whole field, a non-empty one its
// children; a field left without children is removed too. It reports
// whether set changed.
func subtractFields(set, taken map[string]any) bool {
	changed := false
	for k, t := range taken {
		have, ok := set[k]
		if !ok {
			continue
		}
		tm, _ := t.(map[string]any)
		hm, _ := have.(map[string]any)
		if len(tm) == 0 || len(hm) == 0 {
			delete(set, k)
			changed = true
			continue
		}
		if subtractFields(hm, tm) {
			changed = true
			if len(hm) == 0 {
				delete(set, k)
			}
		}
	}
	return changed
}
