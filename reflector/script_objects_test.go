package reflector_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// What the scripts write, read into what a server sends: errors, events
// and objects (testdata/README.md lists the forms).

// closeError reads close's reason: error=KIND (close-error= on watch).
func closeError(t *testing.T, d *datadriven.TestData) error {
	for _, key := range []string{"error", "close-error"} {
		if a, ok := d.Arg(key); ok {
			return serverError(t, a.SingleVal(t), 0)
		}
	}
	return nil
}

// answerError reads error=KIND [retry-after=SECONDS].
func answerError(t *testing.T, d *datadriven.TestData) error {
	a, ok := d.Arg("error")
	if !ok {
		return nil
	}
	retry := 0
	d.MaybeScanArgs(t, "retry-after", &retry)
	return serverError(t, a.SingleVal(t), retry)
}

// serverError makes the error a real client would return for kind.
func serverError(t *testing.T, kind string, retryAfter int) error {
	switch kind {
	case "410":
		return apierrors.NewResourceExpired("too old resource version")
	case "gone":
		return apierrors.NewGone("gone")
	case "too-large-rv":
		err := apierrors.NewTimeoutError("Too large resource version", 1)
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{
			Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
		return err
	case "429":
		return apierrors.NewTooManyRequests("slow down", retryAfter)
	case "500":
		return apierrors.NewInternalError(errors.New("etcd hiccup"))
	case "store-read":
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Reason:  metav1.StatusReasonStoreReadError,
			Message: "failed to prepare current and previous objects: corrupt object has been deleted",
		}}
	case "503":
		return apierrors.NewServiceUnavailable("starting")
	case "400":
		return apierrors.NewBadRequest("unknown parameter sendInitialEvents")
	case "422":
		return apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "", nil)
	case "403":
		return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
	case "404":
		// What a server answers for a resource it does not serve.
		return apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "widgets"}, "")
	case "404-namespace":
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ns")
	case "refused":
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case "eof":
		return io.ErrUnexpectedEOF
	case "decode":
		var v map[string]any
		return json.Unmarshal([]byte("{not json"), &v)
	}
	t.Fatalf("unknown error kind %q", kind)
	return nil
}

// events reads one event a line: TYPE OBJECT, where a BOOKMARK's object is
// @RV (with initial-events-end for WatchList's last), an ERROR's is an
// error kind as in serverError (a Status), decode (what apimachinery's
// stream watcher sends for a frame it cannot decode) or nil. A line
// "TYPE NAME@RV xN" stands for N events, of NAME1@RV, NAME2@RV+1, ...
func events(t *testing.T, input string) []watch.Event {
	var evs []watch.Event
	for _, line := range repeated(t, lines(input)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("event %q: want TYPE OBJECT", line)
		}
		ev := watch.Event{Type: watch.EventType(f[0])}
		switch {
		case ev.Type == watch.Error:
			ev.Object = statusObject(t, f[1])
		case ev.Type == watch.Bookmark:
			p := pod("", strings.TrimPrefix(f[1], "@"))
			if len(f) > 2 && f[2] == "initial-events-end" {
				p.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
			}
			ev.Object = p
		default:
			ev.Object = object(t, strings.Join(f[1:], " "))
		}
		evs = append(evs, ev)
	}
	return evs
}

// repeated expands the lines ending in xN.
func repeated(t *testing.T, in []string) []string {
	var out []string
	for _, line := range in {
		f := strings.Fields(line)
		if len(f) != 3 || !strings.HasPrefix(f[2], "x") {
			out = append(out, line)
			continue
		}
		name, rv, _ := strings.Cut(f[1], "@")
		first, n := number(t, rv), number(t, f[2][1:])
		for i := range n {
			out = append(out, fmt.Sprintf("%s %s%d@%d", f[0], name, i+1, first+i))
		}
	}
	return out
}

// statusObject is an ERROR event's object.
func statusObject(t *testing.T, kind string) runtime.Object {
	switch kind {
	case "nil":
		return (*metav1.Status)(nil)
	case "nil-unstructured":
		return (*unstructured.Unstructured)(nil)
	case "decode":
		return apierrors.NewClientErrorReporter(http.StatusInternalServerError, "watch", "ClientWatchDecoding").
			AsObject(errors.New("unable to decode an event from the watch stream"))
	}
	var status apierrors.APIStatus
	if !errors.As(serverError(t, kind, 0), &status) {
		t.Fatalf("ERROR %s: not a Status", kind)
	}
	st := status.Status()
	return &st
}

// object reads NAME@RV (a pod in namespace ns; NAME may be empty),
// configmap:NAME@RV (the wrong type), unstructured:NAME@RV (a pod as an
// *unstructured.Unstructured), status (no metadata at all), nil (a typed
// nil pod) or nil-unstructured. A pod's NAME@RV may be followed by ns=NS
// (another namespace; ns= for none) and label=KEY=VALUE, repeated.
func object(t *testing.T, spec string) runtime.Object {
	f := strings.Fields(spec)
	if len(f) > 1 {
		return podWith(t, f[0], f[1:])
	}
	switch spec {
	case "status":
		return &metav1.Status{}
	case "nil":
		return (*corev1.Pod)(nil)
	case "nil-unstructured":
		return (*unstructured.Unstructured)(nil)
	}
	typ, spec, typed := strings.Cut(spec, ":")
	if !typed {
		spec = typ
	}
	name, rv, ok := strings.Cut(spec, "@")
	if !ok {
		t.Fatalf("object %q: want NAME@RV", spec)
	}
	switch {
	case typed && typ == "configmap":
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	case typed && typ == "unstructured":
		u := unstructuredPod()
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(rv)
		return u
	case typed:
		t.Fatalf("object %q: unknown type %q", spec, typ)
	}
	return pod(name, rv)
}

// podWith reads a pod's NAME@RV followed by ns= and label= fields.
func podWith(t *testing.T, nameAtRV string, fields []string) *corev1.Pod {
	name, rv, ok := strings.Cut(nameAtRV, "@")
	if !ok {
		t.Fatalf("object %q: want NAME@RV", nameAtRV)
	}
	p := pod(name, rv)
	for _, f := range fields {
		key, value, _ := strings.Cut(f, "=")
		switch key {
		case "ns":
			p.Namespace = value
		case "label":
			k, v, _ := strings.Cut(value, "=")
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels[k] = v
		default:
			t.Fatalf("object %s: unknown field %q: want ns= or label=", nameAtRV, f)
		}
	}
	return p
}

// unstructuredPod is an empty v1 Pod as an *unstructured.Unstructured.
func unstructuredPod() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	return u
}

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func lines(input string) []string {
	var out []string
	for _, l := range strings.Split(input, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// nameRV prints an object as the scripts write it: NAME@RV.
func nameRV(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T(no metadata)", obj)
	}
	return m.GetName() + "@" + m.GetResourceVersion()
}
