package events_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/events"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// A controller reports the same failure five times: the server gets one
// Event whose count is 5.
func ExampleRecorder_Eventf() {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	rec, err := events.NewRecorder(rest.Config{Host: srv.URL()}, events.Options{Component: "web-controller"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { rec.Run(ctx) }) // the recorder's one goroutine
	defer func() { cancel(); wg.Wait() }()

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	for range 5 {
		rec.Eventf(pod, corev1.EventTypeWarning, "FailedSync", "image %q not found", "web:1") // never blocks
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if s := rec.Stats(); s.Created+s.Patched == 5 {
			break
		}
	}
	objs, _ := srv.Objects(eventsv1.SchemeGroupVersion.WithResource("events"))
	for _, o := range objs {
		ev := o.(*eventsv1.Event)
		fmt.Println(ev.Reason, ev.Series.Count, ev.Note)
	}
	fmt.Printf("%+v\n", rec.Stats())
	// Output:
	// FailedSync 5 image "web:1" not found
	// {Created:1 Patched:4 Dropped:0 Filtered:0 Failed:0 Invalid:0}
}
