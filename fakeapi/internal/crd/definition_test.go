package crd

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

const widgets = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1alpha1
    served: true
    storage: false
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`

func readWidgets(t *testing.T) (*unstructured.Unstructured, Definition) {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(widgets), &u.Object))
	def, err := Read(u)
	require.NoError(t, err)
	return u, def
}

// A valid definition serves its storage version, with its names, scope,
// status subresource and printer columns.
func TestServed(t *testing.T) {
	_, def := readWidgets(t)
	require.Empty(t, def.Validate())
	served := def.Served()
	require.Equal(t, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, served.Resource.Kind)
	require.Equal(t, "widgets", served.Resource.Plural)
	require.False(t, served.Resource.ClusterScoped)
	require.Equal(t, "WidgetList", served.ListKind)
	require.Equal(t, []string{"wd"}, served.ShortNames)
	require.True(t, served.StatusSubresource)
	require.Equal(t, "Size", served.Columns.Defs[1].Name)
}

// The rules a client meets first, one cause each.
func TestValidate(t *testing.T) {
	_, def := readWidgets(t)
	def.Metadata.Name = "widgets.other.com"
	def.Spec.Scope = "Everywhere"
	def.Spec.Versions[1].Storage = false
	var fields []string
	for _, e := range def.Validate() {
		fields = append(fields, e.Field)
	}
	require.Equal(t, []string{"metadata.name", "spec.scope", "spec.versions"}, fields)
}

// SetStatus establishes the definition as the real controllers do.
func TestSetStatus(t *testing.T) {
	u, _ := readWidgets(t)
	SetStatus(u, metav1.Now())
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	require.Len(t, conditions, 2)
	require.Equal(t, "Established", conditions[1].(map[string]any)["type"])
	stored, _, _ := unstructured.NestedStringSlice(u.Object, "status", "storedVersions")
	require.Equal(t, []string{"v1"}, stored)
}

// The published document describes the kind in its group version only.
func TestOpenAPIDoc(t *testing.T) {
	_, def := readWidgets(t)
	doc, ok, err := OpenAPIDoc("apis/example.com/v1", []Definition{def})
	require.NoError(t, err)
	require.True(t, ok)
	require.Contains(t, string(doc.Data), `"com.example.v1.Widget"`)
	require.NotEmpty(t, doc.ETag)
	_, ok, err = OpenAPIDoc("apis/example.com/v2", []Definition{def})
	require.NoError(t, err)
	require.False(t, ok)
}
