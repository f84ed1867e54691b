package table

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var now = time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)

func clock() time.Time { return now }

// A list becomes one row per item, with the list's resourceVersion and
// continue token; the headers go only with the first Table of a watch.
func TestConvertList(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7", Continue: "c"}, Items: []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: metav1.NewTime(now.Add(-5 * time.Minute))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
	}}
	tc, err := NewConverter(For(schema.GroupKind{Kind: "Pod"}), "", clock)
	require.NoError(t, err)
	out, err := tc.Convert(list)
	require.NoError(t, err)
	table := out.(*metav1.Table)
	require.Equal(t, "7", table.ResourceVersion)
	require.Equal(t, "c", table.Continue)
	require.Equal(t, "Name", table.ColumnDefinitions[0].Name)
	require.Len(t, table.Rows, 1)
	require.Equal(t, []any{"a", "0/1", "Pending", "0", "5m"}, table.Rows[0].Cells[:5])
	partial, ok := table.Rows[0].Object.Object.(*metav1.PartialObjectMetadata)
	require.True(t, ok, "includeObject defaults to Metadata")
	require.Equal(t, "a", partial.Name)

	tc.OmitHeaders()
	out, err = tc.Convert(&list.Items[0])
	require.NoError(t, err)
	require.Empty(t, out.(*metav1.Table).ColumnDefinitions)
}

// A kind without a printer gets the real server's default table.
func TestDefaultColumns(t *testing.T) {
	cols := For(schema.GroupKind{Group: "example.com", Kind: "Widget"})
	require.Equal(t, "Name", cols.Defs[0].Name)
	require.Equal(t, "Created At", cols.Defs[1].Name)
}

func TestNewConverterRefusesUnknownIncludeObject(t *testing.T) {
	_, err := NewConverter(For(schema.GroupKind{}), "Everything", clock)
	require.True(t, apierrors.IsBadRequest(err), "%v", err)
}

// A CRD's printer columns read the object with the simple JSONPath the
// real server allows, typed by the column's type.
func TestPrinterColumns(t *testing.T) {
	cols := PrinterColumns([]PrinterColumn{
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "First", Type: "string", JSONPath: "{.spec.items[0]}"},
		{Name: "Missing", Type: "string", JSONPath: ".spec.nothing"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	})
	require.Len(t, cols.Defs, 5, "Name comes first")
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "w", "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec":     map[string]any{"size": float64(3), "items": []any{"one"}},
	}}
	require.Equal(t, []any{"w", int64(3), "one", nil, "10m"}, cols.Cells(u, now))
	require.Equal(t, "Age", PrinterColumns(nil).Defs[1].Name, "a CRD without columns gets Age")
}
