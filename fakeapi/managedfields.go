package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
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

// managedFields: kube-apiserver records, in metadata.managedFields, which
// client last set which fields of every object, one entry per writer (the
// "field manager"). It does this for every create, update and patch, not
// only for server-side apply, so every object a real server sends carries
// this bookkeeping: often a fifth or more of its bytes. fakeapi records it
// too, for HTTP writes, so that clients meet realistic objects (and a
// transform that strips managedFields has something to strip), and so that
// server-side apply finds the owners it must not overwrite.
//
// trackWrite records them with the real server's machinery, apimachinery's
// managedfields package (the schemas are apply.go's), with the manager
// named the real way and the server's clock; a write to /scale is tracked
// on its Scale and translated to the workload, as the real server does
// (scale.go). Where that machinery cannot be used (no field manager can be
// built for the type, or it fails on the object), recordManagedFields
// records entries of the real shape with approximate field sets: a field is owned by the last writer
// that changed it, lists are owned as a whole, and, as with the real
// machinery, a write takes the fields it changes away from every other
// manager. Writes through the Go API (Server.Create, Update) record
// nothing: they come from no client.

// trackWrite records an HTTP write of obj over live (nil for a create) by
// req's field manager.
func (s *Server) trackWrite(req requestInfo, obj, live runtime.Object, now time.Time) error {
	if req.subresource == "scale" {
		// Only when scale.go's trackScale could not use the Scale's field
		// manager: the Scale's fields are not the workload's.
		return recordManagedFields(obj, live, req, now)
	}
	fm, err := s.fieldManagerFor(req.res, req.subresource)
	if err != nil {
		return recordManagedFields(obj, live, req, now)
	}
	if live == nil {
		if live, err = s.newObject(req.res); err != nil {
			return err
		}
	}
	out, err := fm.Update(live, obj, req.fieldManager)
	if err != nil {
		// As the real server does, a write whose fields cannot be
		// tracked is not refused for it; the approximation records it.
		return recordManagedFields(obj, live, req, now)
	}
	m, err := meta.Accessor(obj)
	om, err2 := meta.Accessor(out)
	if err != nil || err2 != nil {
		return apierrors.NewInternalError(errors.Join(err, err2))
	}
	m.SetManagedFields(om.GetManagedFields())
	stampTimes(obj, live, now)
	return nil
}

// maxFieldManagerLength is the real server's limit on a manager's name.
const maxFieldManagerLength = 128

// fieldManager names the writer of a request as the real server does: the
// fieldManager query parameter, else the User-Agent up to its first '/'
// ("kubectl" for "kubectl/v1.37.2 (linux/amd64)", "Go-http-client" for Go's
// default), without unprintable characters, cut to 128 bytes.
func fieldManager(r *http.Request) string {
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

// recordManagedFields sets obj's managedFields for a write by req's field
// manager at now. live is the stored object (nil for a create). As on the
// real server, managedFields sent by the client replace the stored ones
// (that is how a client resets them), unless they are empty or the write is
// to a subresource, in which case the stored ones are kept: a client that
// does not know about managedFields cannot erase them by accident.
func recordManagedFields(obj, live runtime.Object, req requestInfo, now time.Time) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	entries := m.GetManagedFields()
	if live != nil && (len(entries) == 0 || req.subresource != "") {
		lm, _ := meta.Accessor(live)
		entries = lm.GetManagedFields()
	}
	newDoc, err := fieldsDocument(obj, req.subresource)
	if err != nil {
		return err
	}
	var owned map[string]any
	if live == nil {
		owned = fieldSet(newDoc, 0)
	} else {
		oldDoc, err := fieldsDocument(live, req.subresource)
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
		Manager:     req.fieldManager,
		Operation:   metav1.ManagedFieldsOperationUpdate,
		APIVersion:  req.res.Kind.GroupVersion().String(),
		Time:        &metav1.Time{Time: now.Truncate(time.Second)},
		FieldsType:  "FieldsV1",
		Subresource: req.subresource,
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
