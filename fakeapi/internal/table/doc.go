// Package table renders objects as the metav1.Table that kubectl get
// prints, as kube-apiserver's server-side printing does.
//
// # What it imitates
//
// kubectl get asks for "application/json;as=Table;v=v1;g=meta.k8s.io" and
// prints what the server sends: the column definitions and, per object, one
// row of cells already formatted (READY 1/1, STATUS Running, AGE 5m), with
// the object's metadata (or the whole object, or nothing, as the request's
// includeObject asks). The server, not kubectl, knows each kind's columns:
// kube-apiserver's printers (pkg/printers/internalversion) for the
// built-in kinds, a CRD's additionalPrinterColumns for a custom resource,
// and a default two-column table (Name, Created At) for any other kind.
//
// This package holds those columns: the real printers' columns for the
// built-in kinds fakeapi serves (columns.go, For), the CRD columns
// evaluated with the real server's simple JSONPath (printercolumns.go,
// PrinterColumns), and the Converter that turns an object, a list or a
// watch event into a Table (table.go).
//
// # Its place
//
// It is one of fakeapi's fidelity packages: the fakeapi core (store,
// history, list, watch) needs none of it to serve an informer. The core
// negotiates the "as=Table" media type and asks a Converter for the body;
// this package knows nothing of the server and depends only on
// apimachinery and the API types.
package table
