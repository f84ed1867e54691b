package table

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Media-type parameters of a Table request: kubectl get asks for
// "application/json;as=Table;v=v1;g=meta.k8s.io".
const (
	As    = "Table"
	Group = "meta.k8s.io"
)

// Columns are one kind's columns and how to fill a row.
type Columns struct {
	// Defs are the column definitions, sent once per response.
	Defs []metav1.TableColumnDefinition
	// Cells fills one row; now is the clock the AGE cells count from.
	Cells func(obj runtime.Object, now time.Time) []any
}

// For picks a built-in kind's columns: the real server's printer for the
// kinds fakeapi serves (columns.go), or the default two columns.
func For(gk schema.GroupKind) Columns {
	if c, ok := builtinColumns[gk]; ok {
		return c
	}
	return defaultColumns
}

// Converter converts what a request reads into Tables. One is made per
// request; a watch sends the column definitions with its first event only
// (kubectl get -w prints the header once: OmitHeaders). It is not safe for
// concurrent use.
type Converter struct {
	columns   Columns
	include   metav1.IncludeObjectPolicy
	now       func() time.Time
	noHeaders bool
}

// NewConverter makes the Converter of one request from the kind's columns
// and the request's includeObject option (Metadata when empty); an unknown
// option is a 400 BadRequest. A nil now means time.Now.
func NewConverter(columns Columns, includeObject string, now func() time.Time) (*Converter, error) {
	include := metav1.IncludeObjectPolicy(includeObject)
	switch include {
	case "":
		include = metav1.IncludeMetadata
	case metav1.IncludeMetadata, metav1.IncludeNone, metav1.IncludeObject:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("includeObject: unsupported value %q", include))
	}
	if now == nil {
		now = time.Now
	}
	return &Converter{columns: columns, include: include, now: now}, nil
}

// OmitHeaders leaves the column definitions out of the Tables that
// follow: a watch sends them with its first event only.
func (tb *Converter) OmitHeaders() { tb.noHeaders = true }

// Convert turns an object or a list into a Table. A Status (an ERROR
// event's) passes through.
func (tb *Converter) Convert(obj runtime.Object) (runtime.Object, error) {
	if _, isStatus := obj.(*metav1.Status); isStatus {
		return obj, nil
	}
	table := &metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: Group + "/v1", Kind: As}}
	if !tb.noHeaders {
		table.ColumnDefinitions = tb.columns.Defs
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

func (tb *Converter) row(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
	row := metav1.TableRow{Cells: tb.columns.Cells(obj, now)}
	switch tb.include {
	case metav1.IncludeObject:
		row.Object = runtime.RawExtension{Object: obj}
	case metav1.IncludeMetadata:
		m, err := meta.Accessor(obj)
		if err != nil {
			return row, err
		}
		p := meta.AsPartialObjectMetadata(m)
		p.APIVersion, p.Kind = Group+"/v1", "PartialObjectMetadata"
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

	// The wide columns of every workload with a pod template (templateCells).
	containersColumn = column("Containers", "string", "Names of each container in the template.", 1)
	imagesColumn     = column("Images", "string", "Images referenced by each container in the template.", 1)
)

// defaultColumns are the real server's table for kinds without a printer.
var defaultColumns = Columns{
	Defs: []metav1.TableColumnDefinition{
		column("Name", "string", nameDescription, 0),
		{Name: "Created At", Type: "date", Description: ageDescription},
	},
	Cells: func(obj runtime.Object, _ time.Time) []any {
		m, err := meta.Accessor(obj)
		if err != nil {
			return []any{"", ""}
		}
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
}
