package admission

import (
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Field validation: what the real server does with fields the type does
// not have (a typo such as spec.replica) and fields given twice, chosen by
// the request's fieldValidation parameter:
//
//	Strict   refuse the write: 400 for a body, 422 for a patch
//	Warn     write, and send one "Warning: 299 - ..." header per field (the default)
//	Ignore   write, silently dropping the fields
//
// kubectl apply, create and replace send fieldValidation=Strict (their
// --validate=strict default) once the OpenAPI v3 documents say the server
// supports it. Custom resources, which have no Go type here, are not
// checked (the real server checks them against the CRD's schema).

// The fieldValidation directives.
const (
	Strict = "Strict"
	Warn   = "Warn"
	Ignore = "Ignore"
)

// FieldValidation reads the fieldValidation directive of a request for
// verb ("create", "update", "patch"; Warn when value is empty); an unknown
// one is 422 on the verb's options, as on the real server. Other verbs
// ignore it (Warn).
func FieldValidation(value, verb string) (string, error) {
	options := map[string]string{"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}[verb]
	switch v := value; {
	case v == "" || options == "":
		return Warn, nil
	case v == Strict || v == Warn || v == Ignore:
		return v, nil
	default:
		return "", apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: options}, "", field.ErrorList{
			field.NotSupported(field.NewPath("fieldValidation"), v, []string{Ignore, Warn, Strict})})
	}
}

// StrictDecoders decode JSON and YAML reporting unknown and duplicate
// fields; they share the server's scheme. They are safe for concurrent
// use.
type StrictDecoders struct {
	json, yaml *kjson.Serializer
}

// NewStrictDecoders makes the strict decoders of a scheme.
func NewStrictDecoders(scheme *runtime.Scheme) StrictDecoders {
	return StrictDecoders{
		json: kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true}),
		yaml: kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true, Yaml: true}),
	}
}

// UnknownFields decodes data (JSON, or YAML when mediaType says so) again,
// strictly, into into (an empty object of kind), and returns the strict
// decoding error, or nil when every field is known or the media type is
// not checked.
func (d StrictDecoders) UnknownFields(data []byte, mediaType string, kind schema.GroupVersionKind, into runtime.Object) error {
	dec := d.json
	switch mediaType {
	case runtime.ContentTypeJSON, "":
	case runtime.ContentTypeYAML:
		dec = d.yaml
	default:
		return nil
	}
	if _, _, err := dec.Decode(data, &kind, into); runtime.IsStrictDecodingError(err) {
		return err
	}
	return nil
}

// CheckFields applies the directive to a body's unknown fields (strictErr,
// from UnknownFields): the error to answer (Strict: 400 for a body, 422 for
// a patch, whose patched document is given), or, for Warn, one Warning
// header per field added to warnings (nil: none sent).
func CheckFields(directive string, kind schema.GroupVersionKind, strictErr error, patched []byte, warnings http.Header) error {
	if strictErr == nil || directive == Ignore {
		return nil
	}
	if directive == Strict {
		if patched != nil {
			return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), string(patched), strictErr.Error())})
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			kind.Kind, kind.Version, kind.Kind, strictErr))
	}
	if se, ok := runtime.AsStrictDecodingError(strictErr); ok && warnings != nil {
		for _, e := range se.Errors() {
			warnings.Add("Warning", "299 - "+strconv.Quote(e.Error()))
		}
	}
	return nil
}
