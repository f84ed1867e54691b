package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer"
)

// Resource is the typed client of one kind, such as *corev1.Pod: the
// requests of client-go's generated clientsets, for any registered type.
// It is safe for concurrent use.
type Resource[T runtime.Object] struct {
	c        *Client
	res      informer.Resource
	protobuf bool
}

// protoMarshaler is implemented by every generated Kubernetes API type; its
// presence says the server can speak protobuf for the type.
type protoMarshaler interface{ Marshal() ([]byte, error) }

// For returns the client of objects of type T. The resource is found exactly
// as informer.For finds it (informer.ResourceFor: Options.Resources, then
// the server's discovery, read once and kept, then a guess only when
// discovery cannot be read), so a type is read and written at the same
// place. A type the scheme does not know gives an error wrapping
// ErrUnknownType at once, before any request; a kind the server does not
// serve, one for which meta.IsNoMatchError is true.
func For[T runtime.Object](c *Client) (*Resource[T], error) {
	obj, err := newObject[T]()
	if err != nil {
		return nil, err
	}
	res, err := informer.ResourceFor(context.Background(), c.scheme, obj, c.resolver)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	_, protobuf := any(obj).(protoMarshaler)
	return &Resource[T]{c: c, res: res, protobuf: protobuf}, nil
}

// Resource says where T lives on the server.
func (r *Resource[T]) Resource() informer.Resource { return r.res }

// Get reads one object from the server (not from a cache): for the read
// that must be fresh, such as the one before a retried update.
func (r *Resource[T]) Get(ctx context.Context, namespace, name string, opts metav1.GetOptions) (T, error) {
	out, _ := newObject[T]()
	q, err := queryOf(&opts)
	if err != nil {
		return out, err
	}
	req := r.request(http.MethodGet, namespace, name, q)
	return out, r.c.do(ctx, "get", req, out)
}

// List reads every object of namespace ("" for all namespaces, or a
// cluster-scoped kind) that opts selects, and the list's resourceVersion.
func (r *Resource[T]) List(ctx context.Context, namespace string, opts metav1.ListOptions) ([]T, string, error) {
	list, err := r.newList()
	if err != nil {
		return nil, "", err
	}
	q, err := queryOf(&opts)
	if err != nil {
		return nil, "", err
	}
	if err := r.c.do(ctx, "list", r.request(http.MethodGet, namespace, "", q), list); err != nil {
		return nil, "", err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	out := make([]T, 0, len(items))
	for _, item := range items {
		t, ok := item.(T)
		if !ok {
			return nil, "", fmt.Errorf("%w: list item is a %T", ErrMalformedResponse, item)
		}
		out = append(out, t)
	}
	accessor, err := meta.ListAccessor(list)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	return out, accessor.GetResourceVersion(), nil
}

// Create makes obj on the server, in obj's namespace, and returns the
// object as stored.
func (r *Resource[T]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	return r.write(ctx, "create", http.MethodPost, obj, "", &opts)
}

// Update replaces obj on the server. obj's resourceVersion is the
// precondition: if the object changed since obj was read, the server
// answers Conflict (apierrors.IsConflict) and RetryOnConflict reads and
// tries again.
func (r *Resource[T]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	return r.write(ctx, "update", http.MethodPut, obj, "", &opts)
}

// UpdateStatus replaces obj's status subresource: the server keeps the spec
// it has and takes only the status, as controllers that report on objects
// need.
func (r *Resource[T]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	return r.write(ctx, "update", http.MethodPut, obj, "status", &opts)
}

// Patch changes part of an object: pt is types.MergePatchType (RFC 7386),
// types.StrategicMergePatchType (built-in types only) or types.JSONPatchType
// (RFC 6902). For server-side apply use Apply, which sends the field
// manager and reads a conflict. subresource is "" or "status".
func (r *Resource[T]) Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresource string) (T, error) {
	out, _ := newObject[T]()
	switch pt {
	case types.MergePatchType, types.StrategicMergePatchType, types.JSONPatchType:
	default:
		return out, fmt.Errorf("client: patch type %q is not one of merge, strategic merge or JSON patch: %w", pt, ErrInvalidObject)
	}
	if name == "" {
		return out, fmt.Errorf("client: patch needs a name: %w", ErrInvalidObject)
	}
	q, err := queryOf(&opts)
	if err != nil {
		return out, err
	}
	req := r.request(http.MethodPatch, namespace, name, q)
	req.subresource, req.body, req.contentType = subresource, data, string(pt)
	return out, r.c.do(ctx, "patch", req, out)
}

// Delete removes an object. opts.Preconditions (UID, resourceVersion) make
// it conditional: the server answers Conflict if the object is no longer
// the one meant.
func (r *Resource[T]) Delete(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
	if name == "" {
		return fmt.Errorf("client: delete needs a name: %w", ErrInvalidObject)
	}
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: r.res.Kind.GroupVersion().String()}
	body, err := json.Marshal(&opts)
	if err != nil {
		return fmt.Errorf("client: encoding delete options: %w", err)
	}
	req := r.request(http.MethodDelete, namespace, name, nil)
	req.body, req.contentType = body, "application/json"
	return r.c.do(ctx, "delete", req, nil)
}

// write sends obj with method to its own place (the collection for a
// create, the object otherwise) and decodes the answer.
func (r *Resource[T]) write(ctx context.Context, verb, method string, obj T, subresource string, opts runtime.Object) (T, error) {
	out, _ := newObject[T]()
	m, err := meta.Accessor(obj)
	if err != nil {
		return out, fmt.Errorf("client: %T has no metadata: %w", obj, ErrInvalidObject)
	}
	if !r.res.ClusterScoped && m.GetNamespace() == "" {
		return out, fmt.Errorf("client: %s %s %q needs a namespace: %w", verb, r.res.Kind.Kind, m.GetName(), ErrInvalidObject)
	}
	name := m.GetName()
	if name == "" && (method != http.MethodPost || m.GetGenerateName() == "") {
		return out, fmt.Errorf("client: %s %s needs a name: %w", verb, r.res.Kind.Kind, ErrInvalidObject)
	}
	if method == http.MethodPost {
		name = ""
	}
	q, err := queryOf(opts)
	if err != nil {
		return out, err
	}
	req := r.request(method, m.GetNamespace(), name, q)
	req.subresource = subresource
	if req.body, req.contentType, err = r.c.encode(obj, r.res.Kind, r.protobuf); err != nil {
		return out, err
	}
	return out, r.c.do(ctx, verb, req, out)
}

// newList makes an empty list for List to decode into: T's list type in
// the scheme, or an unstructured list for a dynamic client.
func (r *Resource[T]) newList() (runtime.Object, error) {
	var zero T
	if _, ok := any(zero).(*unstructured.Unstructured); ok {
		return &unstructured.UnstructuredList{}, nil
	}
	listKind := listKindOf(r.res.Kind)
	list, err := r.c.scheme.New(listKind)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", listKind, ErrUnknownType)
	}
	return list, nil
}

func (r *Resource[T]) request(method, namespace, name string, q url.Values) request {
	return request{method: method, res: r.res, namespace: namespace, name: name, query: q, protobuf: r.protobuf}
}

// queryOf turns Get/List/Create/Update/PatchOptions into query parameters
// with apimachinery's parameter codec, the one the server reads them with.
func queryOf(opts runtime.Object) (url.Values, error) {
	q, err := metav1.ParameterCodec.EncodeParameters(opts, metav1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("client: encoding options: %w", err)
	}
	return q, nil
}
