package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// AddFinalizer makes sure the object carries finalizer, and returns it as
// stored. It is idempotent: an obj that carries it already costs no
// request. Otherwise it sends a merge patch of the whole finalizer list
// with obj's resourceVersion as precondition, so that a finalizer another
// client added meanwhile is never dropped; on Conflict it reads the object
// afresh and tries again (DefaultRetry's steps).
func (r *Resource[T]) AddFinalizer(ctx context.Context, obj T, finalizer string) (T, error) {
	return r.editFinalizers(ctx, obj, func(fs []string) ([]string, bool) {
		if slices.Contains(fs, finalizer) {
			return fs, false
		}
		return append(slices.Clip(fs), finalizer), true
	})
}

// RemoveFinalizer makes sure the object no longer carries finalizer, as
// AddFinalizer adds it: no request when it is absent, a patch with a
// precondition otherwise. Removing the last finalizer of an object being
// deleted lets the server delete it: the answer is then the object as it
// was last stored.
func (r *Resource[T]) RemoveFinalizer(ctx context.Context, obj T, finalizer string) (T, error) {
	return r.editFinalizers(ctx, obj, func(fs []string) ([]string, bool) {
		if !slices.Contains(fs, finalizer) {
			return fs, false
		}
		return slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == finalizer }), true
	})
}

// editFinalizers applies edit to the finalizers of obj, then of fresh
// reads while the patch conflicts.
func (r *Resource[T]) editFinalizers(ctx context.Context, obj T, edit func([]string) ([]string, bool)) (T, error) {
	cur := obj
	var out T
	err := RetryOnConflict(ctx, DefaultRetry, func() error {
		m, err := metaOf(cur)
		if err != nil {
			return err
		}
		fs, changed := edit(m.GetFinalizers())
		if !changed {
			out = cur
			return nil
		}
		out, err = r.patchFinalizers(ctx, m, fs)
		if apierrors.IsConflict(err) {
			fresh, gerr := r.Get(ctx, m.GetNamespace(), m.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			cur = fresh
		}
		return err
	})
	return out, err
}

func (r *Resource[T]) patchFinalizers(ctx context.Context, m metav1.Object, fs []string) (T, error) {
	if fs == nil {
		fs = []string{} // null would delete the field; [] says "none" as plainly
	}
	patch := map[string]any{"metadata": map[string]any{"finalizers": fs}}
	if rv := m.GetResourceVersion(); rv != "" {
		patch["metadata"].(map[string]any)["resourceVersion"] = rv
	}
	data, err := json.Marshal(patch)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("client: encoding the finalizers: %w", err)
	}
	return r.Patch(ctx, m.GetNamespace(), m.GetName(), types.MergePatchType, data, metav1.PatchOptions{}, "")
}
