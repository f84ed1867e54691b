package fakeapi

import (
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Table output: kubectl get asks for
//
//	application/json;as=Table;v=v1;g=meta.k8s.io
//
// and prints what the server sends: column definitions and, per object, one
// row of cells already formatted (READY 1/1, STATUS Running, AGE 5m), plus
// the object's metadata. The server, not kubectl, knows the columns of each
// kind. fakeapi has the real server's columns for the built-in kinds it
// serves (table_columns.go) and the default two-column table (Name, Created
// At) for any other kind, as the real server has for kinds without a
// printer.

const (
	asTable    = "Table"
	tableGroup = "meta.k8s.io"
)

// tableColumns are one kind's columns and how to fill a row.
type tableColumns struct {
	defs  []metav1.TableColumnDefinition
	cells func(obj runtime.Object, now time.Time) []any
}

// tabler converts what a request reads into Tables. One is made per
// request; a watch sends the column definitions with its first event only
// (kubectl get -w prints the header once).
type tabler struct {
	columns   tableColumns
	include   metav1.IncludeObjectPolicy
	now       func() time.Time
	noHeaders bool
}

// newTabler reads the request's includeObject option (Metadata by default).
func (s *Server) newTabler(r *http.Request, ri *resourceInfo) (*tabler, error) {
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	switch include {
	case "":
		include = metav1.IncludeMetadata
	case metav1.IncludeMetadata, metav1.IncludeNone, metav1.IncludeObject:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("includeObject: unsupported value %q", include))
	}
	return &tabler{columns: s.columnsFor(ri), include: include, now: s.opts.Now}, nil
}

// columnsFor picks the kind's columns: its own (custom resources with
// additionalPrinterColumns), the built-in printer, or the default.
func (s *Server) columnsFor(ri *resourceInfo) tableColumns {
	if ri.printerColumns != nil {
		return *ri.printerColumns
	}
	if c, ok := builtinColumns[ri.Kind.GroupKind()]; ok {
		return c
	}
	return defaultColumns
}

// convert turns an object or a list into a Table. A Status (an ERROR
// event's) passes through.
func (tb *tabler) convert(obj runtime.Object) (runtime.Object, error) {
	if _, isStatus := obj.(*metav1.Status); isStatus {
		return obj, nil
	}
	table := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: tableGroup + "/v1", Kind: asTable}}
	if !tb.noHeaders {
		table.ColumnDefinitions = tb.columns.defs
	}
	now := tb.now()
	add := func(item runtime.Object) error {
		row, err := tb.row(item, now)
		if err == nil {
			table.Rows = append(table.Rows, row)
		}
		return err
	}
	if meta.IsListType(obj) {
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, err
		}
		table.ResourceVersion, table.Continue = lm.GetResourceVersion(), lm.GetContinue()
		table.RemainingItemCount = lm.GetRemainingItemCount()
		if err := meta.EachListItem(obj, add); err != nil {
			return nil, err
		}
		if table.Rows == nil {
			table.Rows = []metav1.TableRow{}
		}
		return table, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	table.ResourceVersion = m.GetResourceVersion()
	return table, add(obj)
}

func (tb *tabler) row(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
	row := metav1.TableRow{Cells: tb.columns.cells(obj, now)}
	switch tb.include {
	case metav1.IncludeObject:
		row.Object = runtime.RawExtension{Object: obj}
	case metav1.IncludeMetadata:
		p, err := shape(obj, asPartial)
		if err != nil {
			return row, err
		}
		row.Object = runtime.RawExtension{Object: p}
	}
	return row, nil
}

// age formats how long ago t was, as kubectl's AGE column does; the zero
// time is "<unknown>".
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// column builds one column definition; priority 1 columns are shown by
// kubectl get -o wide only.
func column(name, typ, description string, priority int32) metav1.TableColumnDefinition {
	c := metav1.TableColumnDefinition{Name: name, Type: typ, Description: description, Priority: priority}
	if name == "Name" {
		c.Format = "name"
	}
	return c
}

var (
	nameDescription = metav1.ObjectMeta{}.SwaggerDoc()["name"]
	ageDescription  = metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]
)

// defaultColumns are the real server's table for kinds without a printer.
var defaultColumns = tableColumns{
	defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		{Name: "Created At", Type: "date", Description: ageDescription},
	},
	cells: func(obj runtime.Object, _ time.Time) []any {
		m, err := meta.Accessor(obj)
		if err != nil {
			return []any{"", ""}
		}
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
}
