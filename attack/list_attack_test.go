package attack_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
)

// Attacks through the list.

// newListAttack starts a server whose lists are answered by list and whose
// watches are held open, silent; the informer lists (no WatchList).
func newListAttack(t *testing.T, list handler) *attack {
	a := newAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if isWatch(r) {
			holdOpen(w, r)
			return
		}
		list(a, w, r)
	})
	a.opts.Reflector.WatchList = reflector.WatchListOff
	return a
}

// Item 2: every page carries the same continue token. It was paged for
// ever, hundreds of requests a second, the pages piling up.
func TestAttackContinueTokenLoop(t *testing.T) {
	var n atomic.Int64
	a := newListAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, podList("5", "same-token", a.sentPod(fmt.Sprint("p", n.Add(1)))))
	})
	a.start()
	a.waitErr(reflector.KindDecode, reflector.ErrContinueLoop)
	a.observe(2 * time.Second)
	require.False(t, a.inf.HasSynced(), "a list that never ends is no snapshot")
	// Two pages per attempt, attempts backed off from 800ms.
	a.stop(bounds{requests: 30, heap: 16 << 20})
}

// Item 2, the other half: every page a new continue token, for ever. The
// page cap (small here; 10,000 by default) ends the list.
func TestAttackEndlessPages(t *testing.T) {
	var n atomic.Int64
	a := newListAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		writeJSON(w, http.StatusOK, podList("5", fmt.Sprint("token-", i), a.sentPod(fmt.Sprint("p", i))))
	})
	a.opts.Reflector.MaxListPages = 20
	a.start()
	a.waitErr(reflector.KindDecode, reflector.ErrListTooLarge)
	a.observe(time.Second)
	// Twenty pages per attempt, attempts backed off from 800ms: a few.
	a.stop(bounds{requests: 160, heap: 16 << 20})
}

// Item 4: a 19-byte list response that announces a gigabyte. It was
// allocated up front, on every retry.
func TestAttackLyingContentLength(t *testing.T) {
	a := newListAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"kind":"PodList"}`)) // and the connection ends
	})
	a.start()
	a.waitErr(reflector.KindNetwork, nil)
	a.observe(2 * time.Second)
	a.stop(bounds{requests: 20, heap: 16 << 20, allocated: 64 << 20})
}

// Class "objects without name or resourceVersion": nameless objects are
// refused (KindWrongType), objects without a resourceVersion are kept.
func TestAttackNamelessObjects(t *testing.T) {
	a := newListAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		noRV := a.sentPod("no-rv")
		noRV.ResourceVersion = ""
		nameless := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", ResourceVersion: "3"}}
		writeJSON(w, http.StatusOK, podList("5", "", a.sentPod("a"), nameless, noRV))
	})
	a.start()
	a.waitSynced()
	a.waitErr(reflector.KindWrongType, reflector.ErrNoName)
	require.ElementsMatch(t, []string{"ns/a", "ns/no-rv"}, a.cacheKeys())
	a.stop(bounds{requests: 5, heap: 16 << 20})
}

// Class "a wrong kind": a ConfigMapList where pods were asked for, and a
// list whose items say they are Secrets.
func TestAttackWrongKind(t *testing.T) {
	var n atomic.Int64
	a := newListAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 1 {
			writeJSON(w, http.StatusOK, &corev1.ConfigMapList{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
				Items:    []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}},
			})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"apiVersion": "v1", "kind": "PodList", "metadata": map[string]any{"resourceVersion": "5"},
			"items": []any{map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"namespace": "ns", "name": "s"}}},
		})
	})
	a.start()
	e := a.waitErr(reflector.KindOther, wire.ErrUnexpectedKind)
	require.Equal(t, "list", e.Op)
	a.observe(time.Second)
	require.Empty(t, a.cacheKeys())
	a.stop(bounds{requests: 10, heap: 16 << 20})
}

// Class "a Status instead of a list": 200 OK whose body is a Status.
func TestAttackStatusInsteadOfList(t *testing.T) {
	a := newListAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		st := apierrors.NewInternalError(fmt.Errorf("not a list")).ErrStatus
		st.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
		writeJSON(w, http.StatusOK, &st)
	})
	a.start()
	a.waitErr(reflector.KindOther, wire.ErrUnexpectedKind)
	a.observe(time.Second)
	require.False(t, a.inf.HasSynced())
	a.stop(bounds{requests: 10, heap: 16 << 20})
}

// Classes "garbage and invalid UTF-8" and "deeply nested JSON" in a list
// body.
func TestAttackGarbageList(t *testing.T) {
	bodies := []string{
		"\xff\xfe\x00 not json \x80",
		`{"kind":"PodList","items":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "}",
		`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"\xc3\x28","namespace":"ns","labels":` +
			strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000) + "}}]}",
	}
	var n atomic.Int64
	a := newListAttack(t, func(a *attack, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(bodies[int(n.Add(1)-1)%len(bodies)]))
	})
	a.start()
	a.waitErr(reflector.KindDecode, nil)
	a.observe(2 * time.Second)
	require.Empty(t, a.cacheKeys())
	a.stop(bounds{requests: 20, heap: 32 << 20})
}
