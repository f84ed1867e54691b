package crd

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/seed31a95821/informer/fakeapi/internal/openapi"
)

// The OpenAPI v3 document of a custom resource's group version, as the
// real server publishes it once the CRD is established: the CRD's schema
// with apiVersion, kind and metadata added and the kind's
// x-kubernetes-group-version-kind, the meta.k8s.io types it refers to, and
// for each resource path the patch operation with its fieldValidation
// parameter (which kubectl looks for). kubectl explain reads it. The
// schema is published, not enforced: fakeapi stores custom resources as
// sent.

// OpenAPIDoc builds the document of one group version path
// ("apis/example.com/v1") from the served definitions of that group
// version (others are skipped). ok is false when there are none.
func OpenAPIDoc(gvPath string, defs []Definition) (doc openapi.Doc, ok bool, err error) {
	schemas, err := metaSchemas()
	if err != nil {
		return openapi.Doc{}, false, err
	}
	paths := map[string]any{}
	found := false
	for _, v := range defs {
		ver, _ := v.StorageVersion()
		if "apis/"+v.Spec.Group+"/"+ver.Name != gvPath {
			continue
		}
		found = true
		names := v.Spec.Names
		gvk := map[string]any{"group": v.Spec.Group, "version": ver.Name, "kind": names.Kind}
		schemas[schemaName(v.Spec.Group, ver.Name, names.Kind)] = objectSchema(ver.Schema.OpenAPIV3Schema, gvk)
		object := "/" + gvPath + "/" + names.Plural + "/{name}"
		if v.Spec.Scope == "Namespaced" {
			object = "/" + gvPath + "/namespaces/{namespace}/" + names.Plural + "/{name}"
		}
		paths[object] = map[string]any{"patch": map[string]any{
			"x-kubernetes-group-version-kind": gvk,
			"parameters": []any{
				map[string]any{"name": "fieldManager", "in": "query", "schema": map[string]any{"type": "string"}},
				map[string]any{"name": "fieldValidation", "in": "query", "schema": map[string]any{"type": "string"}},
			},
		}}
	}
	if !found {
		return openapi.Doc{}, false, nil
	}
	data, err := json.Marshal(map[string]any{
		"openapi": "3.0.0", "info": map[string]any{"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
		"paths": paths, "components": map[string]any{"schemas": schemas},
	})
	if err != nil {
		return openapi.Doc{}, false, err
	}
	return openapi.NewDoc(data), true, nil
}

// schemaName is the real server's name of a custom kind's schema: the
// group reversed, then version and kind ("com.example.v1.Widget").
func schemaName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "." + kind
}

// objectSchema is the CRD's schema of the kind, with the fields every
// object has.
func objectSchema(schema map[string]any, gvk map[string]any) map[string]any {
	out := map[string]any{"type": "object"}
	for k, v := range schema {
		out[k] = v
	}
	props := map[string]any{}
	if p, ok := out["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	props["apiVersion"] = map[string]any{"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}
	props["kind"] = map[string]any{"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}
	props["metadata"] = map[string]any{"description": "Standard object's metadata.",
		"allOf": []any{map[string]any{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}}
	out["properties"] = props
	out["x-kubernetes-group-version-kind"] = []any{gvk}
	return out
}

// metaSchemas are the meta.k8s.io schemas a custom resource's document
// refers to, taken from the recorded apiextensions.k8s.io document.
func metaSchemas() (map[string]any, error) {
	doc, err := openapi.RecordedV3("apis/apiextensions.k8s.io/v1")
	if err != nil {
		return nil, err
	}
	var parsed struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc.Data, &parsed); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name, schema := range parsed.Components.Schemas {
		if strings.HasPrefix(name, "io.k8s.apimachinery.pkg.apis.meta.v1.") {
			out[name] = schema
		}
	}
	return out, nil
}
