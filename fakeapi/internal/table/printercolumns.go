package table

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// PrinterColumn is one of a CRD version's additionalPrinterColumns.
type PrinterColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
	JSONPath    string `json:"jsonPath"`
}

// cell is the column's value in an object, typed by the column's type as
// the real server types it: integer and number columns hold numbers, date
// columns an age ("5m"), string columns the value printed; a missing or
// mistyped value is an empty (nil) cell.
func (c PrinterColumn) cell(obj map[string]any, now time.Time) any {
	value, ok := simpleJSONPath(obj, c.JSONPath)
	if !ok || value == nil {
		return nil
	}
	switch c.Type {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		s, ok := value.(string)
		if !ok {
			return nil
		}
		var t metav1.Time
		if err := t.UnmarshalQueryParameter(s); err != nil {
			return "<invalid>"
		}
		return age(t, now)
	case "string":
		if s, ok := value.(string); ok {
			return s
		}
		data, _ := json.Marshal(value)
		return string(data)
	}
	return nil
}

// simpleJSONPath evaluates the "simple" JSONPath the real server allows in
// printer columns: .field.field with optional [index]es (the braces of
// {.spec.replicas} are optional). Anything more is not found.
func simpleJSONPath(obj map[string]any, path string) (any, bool) {
	path = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(path), "{"), "}")
	if !strings.HasPrefix(path, ".") {
		return nil, false
	}
	var current any = obj
	for _, part := range strings.Split(path[1:], ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			m, ok := current.(map[string]any)
			if !ok {
				return nil, false
			}
			if current, ok = m[name]; !ok {
				return nil, false
			}
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			list, isList := current.([]any)
			if !ok || err != nil || !isList || n < 0 || n >= len(list) {
				return nil, false
			}
			current, rest = list[n], strings.TrimPrefix(after, "[")
		}
	}
	return current, true
}

// PrinterColumns turns a CRD version's additionalPrinterColumns into
// Table columns: Name, then the CRD's columns, or Age when it has none, as
// on the real server. The cells read *unstructured.Unstructured objects.
func PrinterColumns(cols []PrinterColumn) Columns {
	if len(cols) == 0 {
		cols = []PrinterColumn{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Description: ageDescription}}
	}
	defs := []metav1.TableColumnDefinition{column("Name", "string", nameDescription, 0)}
	for _, c := range cols {
		defs = append(defs, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format,
			Description: c.Description, Priority: c.Priority})
	}
	return Columns{Defs: defs, Cells: func(obj runtime.Object, now time.Time) []any {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil
		}
		cells := []any{u.GetName()}
		for _, c := range cols {
			cells = append(cells, c.cell(u.Object, now))
		}
		return cells
	}}
}
