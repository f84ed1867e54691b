package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer"
)

// ApplyOptions configure a server-side apply.
type ApplyOptions struct {
	// FieldManager names the owner of the fields the apply sends, such as
	// "my-controller". The server requires it. Use one name per
	// controller, the same on every apply: the fields a manager owned and
	// no longer sends are removed.
	FieldManager string
	// Force takes ownership of fields another manager owns instead of
	// failing with an *ApplyConflictError. A controller that is the
	// authority for its fields sets it; one that shares them with people
	// does not, and handles the conflict.
	Force bool
	// DryRun, when set to []string{"All"}, asks the server to validate and
	// merge without storing.
	DryRun []string
}

func (o ApplyOptions) query() (*metav1.PatchOptions, error) {
	if o.FieldManager == "" {
		return nil, fmt.Errorf("client: apply needs a FieldManager: %w", ErrInvalidObject)
	}
	p := &metav1.PatchOptions{FieldManager: o.FieldManager, DryRun: o.DryRun}
	if o.Force {
		p.Force = &o.Force
	}
	return p, nil
}

// Apply sends obj as a server-side apply (PATCH with
// application/apply-patch+yaml): the server merges the fields obj sets into
// the object, creating it if needed, and records opts.FieldManager as their
// owner. A field another manager owns makes it fail with an
// *ApplyConflictError, unless opts.Force.
//
// obj is a whole typed struct, and every field it serialises is claimed,
// zero values included: see "The typed-struct trap" in the package doc.
// obj's managedFields are never sent; its resourceVersion, when set, is a
// precondition.
func (r *Resource[T]) Apply(ctx context.Context, obj T, opts ApplyOptions) (T, error) {
	return r.apply(ctx, obj, "", opts)
}

// ApplyStatus is Apply to the status subresource: the fields of obj's
// status are merged and owned, its spec is ignored.
func (r *Resource[T]) ApplyStatus(ctx context.Context, obj T, opts ApplyOptions) (T, error) {
	return r.apply(ctx, obj, "status", opts)
}

func (r *Resource[T]) apply(ctx context.Context, obj T, subresource string, opts ApplyOptions) (T, error) {
	out, _ := newObject[T]()
	body, _, err := r.c.encode(obj, r.res.Kind, false)
	if err != nil {
		return out, err
	}
	return out, r.c.apply(ctx, r.res, body, subresource, opts, r.protobuf, out)
}

// apply sends an apply patch of body, an encoded object, to the object it
// names.
func (c *Client) apply(ctx context.Context, res informer.Resource, body []byte, subresource string, opts ApplyOptions, protobuf bool, into runtime.Object) error {
	pOpts, err := opts.query()
	if err != nil {
		return err
	}
	q, err := queryOf(pOpts)
	if err != nil {
		return err
	}
	body, ns, name, err := applyBody(body)
	if err != nil {
		return err
	}
	if name == "" || (!res.ClusterScoped && ns == "") {
		return fmt.Errorf("client: apply of %s %q needs a name and, when namespaced, a namespace: %w", res.Kind.Kind, name, ErrInvalidObject)
	}
	req := request{method: http.MethodPatch, res: res, namespace: ns, name: name, subresource: subresource,
		query: q, body: body, contentType: string(types.ApplyPatchType), protobuf: protobuf}
	return c.do(ctx, "apply", req, into)
}

// applyBody drops metadata.managedFields from an encoded object (the
// server refuses an apply that sets them, and an object read back carries
// them) and says which object it names.
func applyBody(body []byte) ([]byte, string, string, error) {
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, "", "", fmt.Errorf("client: apply body: %w", err)
	}
	u := unstructured.Unstructured{Object: obj}
	if _, ok := u.Object["metadata"].(map[string]any); ok {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, "", "", fmt.Errorf("client: apply body: %w", err)
	}
	return out, u.GetNamespace(), u.GetName(), nil
}

// ApplyConflictError is the 409 Conflict of an apply that would change
// fields other managers own. Each Conflicts entry names one manager and one
// field; resolve them by dropping those fields from what you apply, by
// Force, or by agreeing with the other manager. It unwraps to the server's
// *apierrors.StatusError, so apierrors.IsConflict is true.
type ApplyConflictError struct {
	Conflicts []FieldConflict
	Err       error // the server's *apierrors.StatusError
}

// FieldConflict is one field another manager owns.
type FieldConflict struct {
	// Manager is the other manager's name, such as "kubectl-edit".
	Manager string
	// Field is the field's path, such as ".spec.replicas".
	Field string
	// Message is the server's words, which may add how the manager wrote
	// the field ("using apps/v1", "with subresource \"status\"").
	Message string
}

// Error lists the conflicts.
func (e *ApplyConflictError) Error() string {
	parts := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		parts[i] = fmt.Sprintf("%s owned by %q", c.Field, c.Manager)
	}
	return fmt.Sprintf("client: apply conflicts with other field managers: %s", strings.Join(parts, ", "))
}

// Unwrap exposes the server's error.
func (e *ApplyConflictError) Unwrap() error { return e.Err }

// applyConflict turns the server's 409 to an apply into an
// *ApplyConflictError when its causes name field managers; any other
// error is returned as it is.
func applyConflict(err error) error {
	if !apierrors.IsConflict(err) {
		return err
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return err
	}
	var conflicts []FieldConflict
	for _, cause := range status.Status().Details.Causes {
		if cause.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		conflicts = append(conflicts, FieldConflict{Manager: managerOf(cause.Message), Field: cause.Field, Message: cause.Message})
	}
	if len(conflicts) == 0 {
		return err
	}
	return &ApplyConflictError{Conflicts: conflicts, Err: err}
}

// managerOf reads the manager's name from a cause's message, `conflict
// with "name"` and maybe more; a message of another shape is kept whole.
func managerOf(msg string) string {
	rest, ok := strings.CutPrefix(msg, "conflict with ")
	if !ok {
		return msg
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return rest
	}
	name, err := strconv.Unquote(quoted)
	if err != nil {
		return rest
	}
	return name
}

// metaOf is meta.Accessor with the client's error.
func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("client: %T has no metadata: %w", obj, ErrInvalidObject)
	}
	return m, nil
}
