package integration

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/fakeapi"
)

// scopedWriter writes pods in two namespaces, with labels that move them in
// and out of the informer's scope (namespace shop, app=web): creates,
// deletes and label moves across the selector, in a seeded order.
type scopedWriter struct {
	srv  *fakeapi.Server
	rng  *rand.Rand
	live []*corev1.Pod
	next int
}

func (w *scopedWriter) randomLabels() map[string]string {
	return map[string]string{"app": []string{"web", "db"}[w.rng.IntN(2)], "rev": fmt.Sprint(w.rng.IntN(100))}
}

func (w *scopedWriter) writes(t *testing.T, n int) {
	t.Helper()
	for range n {
		switch r := w.rng.IntN(10); {
		case r < 4 || len(w.live) == 0:
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Namespace: []string{"shop", "shop", "blog"}[w.rng.IntN(3)],
				Name:      fmt.Sprintf("p-%04d", w.next), Labels: w.randomLabels()}}
			w.next++
			_, err := w.srv.Create(p)
			require.NoError(t, err)
			w.live = append(w.live, p)
		case r < 6:
			i := w.rng.IntN(len(w.live))
			require.NoError(t, w.srv.Delete(w.live[i]))
			w.live = append(w.live[:i], w.live[i+1:]...)
		default: // a label move: in or out of app=web, or a change within
			p := w.live[w.rng.IntN(len(w.live))]
			p.Labels = w.randomLabels()
			_, err := w.srv.Update(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels}})
			require.NoError(t, err)
		}
	}
}

// createInScope creates n pods the informer watches, so that a paged list
// has more than one page.
func (w *scopedWriter) createInScope(n int) error {
	for range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("p-%04d", w.next),
			Labels: map[string]string{"app": "web"}}}
		w.next++
		if _, err := w.srv.Create(p); err != nil {
			return err
		}
		w.live = append(w.live, p)
	}
	return nil
}

// flood updates up to three pods in scope n times in all, round robin,
// without moving them out: enough notifications at once for slow handlers
// to fall past their backlog limits and coalesce.
func (w *scopedWriter) flood(n int) error {
	var targets []*corev1.Pod
	for _, p := range w.live {
		if p.Namespace == "shop" && p.Labels["app"] == "web" && len(targets) < 3 {
			targets = append(targets, p)
		}
	}
	if len(targets) == 0 {
		if err := w.createInScope(1); err != nil {
			return err
		}
		targets = w.live[len(w.live)-1:]
	}
	for i := range n {
		p := targets[i%len(targets)]
		p.Labels = map[string]string{"app": "web", "rev": fmt.Sprint(i)}
		if _, err := w.srv.Update(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels}}); err != nil {
			return err
		}
	}
	return nil
}
