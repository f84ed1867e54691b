package reflector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Table tests for every resourceVersion and retry decision.

func TestListResourceVersion(t *testing.T) {
	tests := []struct {
		name       string
		lastSynced string
		unusable   bool
		want       string
	}{
		{"first list: any version, from the watch cache", "", false, "0"},
		{"relist: at least as fresh as what we saw", "42", false, "42"},
		{"last RV refused (410 / too large): consistent read", "42", true, ""},
		{"refused before anything was synced", "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, listResourceVersion(tt.lastSynced, tt.unusable))
		})
	}
}

func TestStreamResourceVersion(t *testing.T) {
	assert.Equal(t, "", streamResourceVersion("", false), "first WatchList: consistent snapshot")
	assert.Equal(t, "42", streamResourceVersion("42", false))
	assert.Equal(t, "", streamResourceVersion("42", true))
}

func TestPageLimit(t *testing.T) {
	tests := []struct {
		name            string
		pageSize        int64
		rv              string
		paginatedBefore bool
		want            int64
	}{
		{"default, first list at 0", 0, "0", false, 500},
		{"default, consistent list", 0, "", false, 500},
		{"default, at a specific RV: unpaged, for the watch cache", 0, "42", false, 0},
		{"default, server paged the first list: keep paging", 0, "42", true, 500},
		{"explicit size always pages", 100, "42", false, 100},
		{"negative never pages", -1, "0", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pageLimit(tt.pageSize, tt.rv, tt.paginatedBefore))
		})
	}
}

func TestWatchTimeoutSeconds(t *testing.T) {
	assert.Equal(t, int64(300), watchTimeoutSeconds(5*time.Minute, 0))
	assert.Equal(t, int64(450), watchTimeoutSeconds(5*time.Minute, 0.5))
	assert.Equal(t, int64(599), watchTimeoutSeconds(5*time.Minute, 0.9999))
	assert.Equal(t, int64(1), watchTimeoutSeconds(time.Second, 0.99), "short timeouts for fake servers")
	assert.Equal(t, int64(1), watchTimeoutSeconds(100*time.Millisecond, 0.5), "0 would mean no timeout")
}

func TestRefusesWatchList(t *testing.T) {
	gk := schema.GroupKind{Kind: "Pod"}
	assert.True(t, refusesWatchList(fmt.Errorf("x: %w", errWatchListTimeout)))
	assert.True(t, refusesWatchList(errWatchListClosed))
	assert.True(t, refusesWatchList(apierrors.NewBadRequest("unknown parameter sendInitialEvents")))
	assert.True(t, refusesWatchList(apierrors.NewInvalid(gk, "", nil)))
	assert.True(t, refusesWatchList(apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "pods"}, "watch")))
	assert.False(t, refusesWatchList(apierrors.NewTooManyRequests("slow down", 1)))
	assert.False(t, refusesWatchList(connRefused()))
	assert.False(t, refusesWatchList(apierrors.NewResourceExpired("old")))
}

func TestUseWatchList(t *testing.T) {
	tests := []struct {
		mode              WatchListMode
		lwSupports, refus bool
		want              bool
	}{
		{WatchListAuto, true, false, true},
		{WatchListAuto, false, false, false},
		{WatchListAuto, true, true, false},
		{WatchListOn, false, true, true},
		{WatchListOff, true, false, false},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%v/lw=%v/refused=%v", tt.mode, tt.lwSupports, tt.refus)
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, useWatchList(tt.mode, tt.lwSupports, tt.refus))
		})
	}
}

func TestReplaysState(t *testing.T) {
	assert.True(t, replaysState(""))
	assert.True(t, replaysState("0"))
	assert.False(t, replaysState("42"))
}

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	oldTooLarge := apierrors.NewTimeoutError("Too large resource version: 10, current: 5", 1)
	decodeStatus := apierrors.NewClientErrorReporter(500, "GET", clientWatchDecoding).
		AsObject(errors.New("unable to decode an event from the watch stream"))
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"410 Expired", apierrors.NewResourceExpired("too old"), KindExpired},
		{"410 Gone (servers < 1.18)", apierrors.NewGone("gone"), KindExpired},
		{"wrapped 410", fmt.Errorf("list: %w", apierrors.NewResourceExpired("x")), KindExpired},
		{"too large RV, status cause", tooLargeRV(), KindTooLargeRV},
		{"too large RV, message only (servers < 1.17)", oldTooLarge, KindTooLargeRV},
		{"plain 504 timeout", apierrors.NewTimeoutError("slow", 1), KindServerError},
		{"429", apierrors.NewTooManyRequests("slow down", 3), KindThrottled},
		{"500", apierrors.NewInternalError(errors.New("boom")), KindServerError},
		{"503", apierrors.NewServiceUnavailable("starting"), KindServerError},
		{"403", apierrors.NewForbidden(gr, "", errors.New("rbac")), KindRejected},
		{"404: the resource is not served", apierrors.NewNotFound(gr, ""), KindNotServed},
		{"404 naming a namespace", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ns"), KindRejected},
		{"stream decoding status", apierrors.FromObject(decodeStatus), KindDecode},
		{"ErrDecode from the wire", fmt.Errorf("frame 3: %w", ErrDecode), KindDecode},
		{"json syntax", &json.SyntaxError{}, KindDecode},
		{"not a list", errNotList, KindDecode},
		{"connection refused", connRefused(), KindNetwork},
		{"connection reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, KindNetwork},
		{"EOF", io.EOF, KindNetwork},
		{"unexpected EOF", fmt.Errorf("frame: %w", io.ErrUnexpectedEOF), KindNetwork},
		{"wrong type", fmt.Errorf("%w: x", ErrWrongType), KindWrongType},
		{"no metadata", errNoMetadata, KindWrongType},
		{"out of scope", fmt.Errorf("%w: x", ErrOutOfScope), KindRefused},
		{"invalid name", fmt.Errorf("%w: x", ErrInvalidName), KindRefused},
		{"watchlist timeout", errWatchListTimeout, KindWatchListTimeout},
		{"stuck", errStuckWatch, KindStuckWatch},
		{"short", errShortWatch, KindShortWatch},
		{"RV went backwards", errRVBackwards, KindRVBackwards},
		{"500 StorageReadError (KEP-3926)", storeReadError(), KindStoreRead},
		{"wrapped StorageReadError", fmt.Errorf("watch: %w", storeReadError()), KindStoreRead},
		{"something else", errors.New("?"), KindOther},
		{"an *Error keeps its kind", &Error{Kind: KindStore, Err: io.EOF}, KindStore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, KindOf(tt.err))
		})
	}
}

// storeReadError is what kube-apiserver sends a watch after an object it
// cannot read was force-deleted (KEP-3926).
func storeReadError() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonStoreReadError,
		Message: "failed to prepare current and previous objects: corrupt object has been deleted",
	}}
}

func TestWentBack(t *testing.T) {
	tests := []struct {
		reached, rv string
		want        bool
	}{
		{"12", "11", true},
		{"12", "12", false},
		{"12", "13", false},
		{"100", "99", true},  // shorter is smaller: not "99" > "100" as strings
		{"99", "100", false}, // longer is greater
		{"18446744073709551616", "18446744073709551615", true}, // past uint64
		{"", "5", false},      // no position yet
		{"0", "5", false},     // "0" is no position
		{"5", "0", false},     // nor a position to go back to
		{"12", "", false},     // an event without an RV does not move the position
		{"12", "011", false},  // a leading zero: not a number apimachinery compares
		{"abc", "abb", false}, // opaque (an aggregated server's): never compared
		{"12", "1a", false},
		{"-1", "-2", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, wentBack(tt.reached, tt.rv), "reached %q, event at %q", tt.reached, tt.rv)
	}
}

func TestRetryAfter(t *testing.T) {
	assert.Equal(t, 7, retryAfter(apierrors.NewTooManyRequests("slow", 7)))
	assert.Equal(t, 0, retryAfter(apierrors.NewTooManyRequests("slow", 0)))
	assert.Equal(t, 2, retryAfter(fmt.Errorf("w: %w", apierrors.NewServerTimeout(schema.GroupResource{}, "list", 2))))
	assert.Equal(t, 0, retryAfter(io.EOF))
	assert.Equal(t, 0, retryAfter(nil))
}

func TestErrorWrapsCause(t *testing.T) {
	cause := apierrors.NewResourceExpired("old")
	e := &Error{Reflector: "pods", Op: opWatch, Kind: KindExpired, Err: cause}
	assert.Equal(t, "reflector pods: watch: Expired: old", e.Error())
	assert.True(t, apierrors.IsResourceExpired(e))
	assert.ErrorIs(t, e, cause)
	assert.Equal(t, "Kind(99)", Kind(99).String())
	assert.Equal(t, "State(-1)", State(-1).String())
	assert.Equal(t, "backoff then Relisting (consistent)", describe(backingOff{then: listing{relist: true, consistent: true}}))
	assert.False(t, errors.Is(context.Canceled, errStuckWatch))
	_ = metav1.StatusFailure
}
