package openapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The OpenAPI v3 document of a built-in group version that was not
// recorded (coordination.k8s.io/v1, whose Leases carry leader election),
// derived from the recorded v2 document instead of committing one more
// recorded file: the v2 definitions of the group version's kinds and
// everything they refer to, with each "$ref" moved from #/definitions/ to
// #/components/schemas/ and wrapped in allOf as the real v3 documents
// have it, and for each object path the patch operation with its
// fieldManager and fieldValidation parameters (which kubectl looks for);
// a path with no patch but a post (a collection, a create-only review)
// gets its post, so that kubectl explain finds a review's kind from its
// resource.
// It carries what kubectl explain and kubectl apply read; it is not
// byte-equal to the real server's document.

// swaggerV2 is the part of the v2 document the derivation reads.
type swaggerV2 struct {
	Definitions map[string]any `json:"definitions"`
	Paths       map[string]map[string]any
}

// parseV2 decodes the v2 JSON document, once for every group version
// derived from it: it is megabytes, and decoding it is most of the cost.
func parseV2(v2 []byte) (*swaggerV2, error) {
	var swagger swaggerV2
	if err := json.Unmarshal(v2, &swagger); err != nil {
		return nil, fmt.Errorf("fakeapi/internal/openapi: the v2 OpenAPI document: %w", err)
	}
	return &swagger, nil
}

// derivedV3Doc builds the v3 document of gvPath ("apis/coordination.k8s.io/v1")
// from the v2 document. ok is false when v2 defines no kind of it.
func derivedV3Doc(swagger *swaggerV2, gvPath string) (Doc, bool, error) {
	gv := strings.TrimPrefix(strings.TrimPrefix(gvPath, "apis/"), "api/")
	schemas := map[string]any{}
	var walk func(name string)
	walk = func(name string) {
		def, ok := swagger.Definitions[name]
		if _, done := schemas[name]; done || !ok {
			return
		}
		schemas[name] = nil // mark before recursing: definitions refer to themselves (JSONSchemaProps)
		var refs []string
		schemas[name] = v3Schema(def, &refs)
		for _, r := range refs {
			walk(r)
		}
	}
	for name, def := range swagger.Definitions {
		if definesKindOf(def, gv) {
			walk(name)
		}
	}
	if len(schemas) == 0 {
		return Doc{}, false, nil
	}
	paths := map[string]any{}
	for path, ops := range swagger.Paths {
		if !strings.HasPrefix(path, "/"+gvPath+"/") {
			continue
		}
		verb := "patch"
		op, ok := ops[verb].(map[string]any)
		if !ok {
			verb = "post"
			op, ok = ops[verb].(map[string]any)
		}
		if !ok {
			continue
		}
		paths[path] = map[string]any{verb: map[string]any{
			"x-kubernetes-group-version-kind": op["x-kubernetes-group-version-kind"],
			"parameters": []any{
				map[string]any{"name": "fieldManager", "in": "query", "schema": map[string]any{"type": "string"}},
				map[string]any{"name": "fieldValidation", "in": "query", "schema": map[string]any{"type": "string"}},
			},
		}}
	}
	data, err := json.Marshal(map[string]any{
		"openapi": "3.0.0", "info": map[string]any{"title": "Kubernetes", "version": "derived"},
		"paths": paths, "components": map[string]any{"schemas": schemas},
	})
	if err != nil {
		return Doc{}, false, err
	}
	return NewDoc(data), true, nil
}

// definesKindOf tells whether a v2 definition is a kind of the group
// version gv ("coordination.k8s.io/v1", "v1").
func definesKindOf(def any, gv string) bool {
	m, _ := def.(map[string]any)
	kinds, _ := m["x-kubernetes-group-version-kind"].([]any)
	for _, k := range kinds {
		k, _ := k.(map[string]any)
		group, _ := k["group"].(string)
		version, _ := k["version"].(string)
		if (group == "" && version == gv) || (group != "" && group+"/"+version == gv) {
			return true
		}
	}
	return false
}

// v3Schema copies a v2 schema into v3 form and appends the names of the
// definitions it refers to.
func v3Schema(v any, refs *[]string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = v3Schema(e, refs)
		}
		ref, ok := v["$ref"].(string)
		if !ok {
			return out
		}
		name := strings.TrimPrefix(ref, "#/definitions/")
		*refs = append(*refs, name)
		target := map[string]any{"$ref": "#/components/schemas/" + name}
		if len(v) == 1 {
			return target
		}
		delete(out, "$ref")
		out["allOf"] = []any{target}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = v3Schema(e, refs)
		}
		return out
	default:
		return v
	}
}
