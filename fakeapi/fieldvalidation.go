package fakeapi

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

const (
	fieldValidationStrict = "Strict"
	fieldValidationWarn   = "Warn"
	fieldValidationIgnore = "Ignore"
)

// fieldValidation reads the directive of a write; an unknown one is 422
// on the verb's options, as on the real server. Reads ignore it.
func fieldValidation(r *http.Request, verb string) (string, error) {
	options := map[string]string{verbCreate: "CreateOptions", verbUpdate: "UpdateOptions", verbPatch: "PatchOptions"}[verb]
	switch v := r.URL.Query().Get("fieldValidation"); {
	case v == "" || options == "":
		return fieldValidationWarn, nil
	case v == fieldValidationStrict || v == fieldValidationWarn || v == fieldValidationIgnore:
		return v, nil
	default:
		return "", apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: options}, "", field.ErrorList{
			field.NotSupported(field.NewPath("fieldValidation"), v,
				[]string{fieldValidationIgnore, fieldValidationWarn, fieldValidationStrict})})
	}
}

// strictDecoders decode JSON and YAML reporting unknown and duplicate
// fields; they share the server's scheme.
type strictDecoders struct {
	json, yaml *kjson.Serializer
}

func newStrictDecoders(scheme *runtime.Scheme) strictDecoders {
	return strictDecoders{
		json: kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true}),
		yaml: kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true, Yaml: true}),
	}
}

// unknownFields decodes data again, strictly, and returns the strict
// decoding error, or nil when every field is known (or the media type or
// resource is not checked).
func (s *Server) unknownFields(req requestInfo, data []byte, mediaType string) error {
	ri := req.res
	if ri.unstructured || req.fieldValidation == fieldValidationIgnore { // Ignore: nothing to find
		return nil
	}
	dec := s.strict.json
	switch mediaType {
	case mediaJSON, "":
	case mediaYAML:
		dec = s.strict.yaml
	default:
		return nil
	}
	into, err := s.newObject(ri)
	if err != nil {
		return nil
	}
	if _, _, err := dec.Decode(data, &ri.Kind, into); runtime.IsStrictDecodingError(err) {
		return err
	}
	return nil
}

// checkFields applies the directive to a body's unknown fields: the
// error to answer, or the warnings to send.
func checkFields(req requestInfo, strictErr error, patched []byte) error {
	directive, kind := req.fieldValidation, req.res.Kind
	if strictErr == nil || directive == fieldValidationIgnore {
		return nil
	}
	if directive == fieldValidationStrict {
		if patched != nil {
			return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), string(patched), strictErr.Error())})
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			kind.Kind, kind.Version, kind.Kind, strictErr))
	}
	if se, ok := runtime.AsStrictDecodingError(strictErr); ok && req.warnings != nil {
		for _, e := range se.Errors() {
			req.warnings.Add("Warning", "299 - "+strconv.Quote(e.Error()))
		}
	}
	return nil
}
