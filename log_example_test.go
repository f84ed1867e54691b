package informer_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
)

// A controller-runtime program logs through a logr.Logger; the library takes
// a *slog.Logger. logr.ToSlogHandler bridges the two, so the informer's
// lines reach the program's logger with their structured keys. (funcr
// stands in here for the program's zapr or klogr. The bridge hands an
// Error-level record to logr's Error with a nil error, hence "error"=null
// before the library's own "error" key.)
func ExampleOptions_logr() {
	srv := mustServe(pod("shop", "web", nil))
	defer srv.Close()

	// The resourceVersion the cache had reached when the handler panicked
	// depends on timing (the handler may run before the list's RV is
	// recorded), so this example prints it as "…".
	reached := regexp.MustCompile(`"resourceVersion"="[^"]*"`)
	var programLogger logr.Logger = funcr.New(func(_, args string) {
		fmt.Println(reached.ReplaceAllString(args, `"resourceVersion"="…"`))
	}, funcr.Options{})
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{
		Informer: informer.Options{Logger: slog.New(logr.ToSlogHandler(programLogger))},
	})
	pods, _ := informer.For[*corev1.Pod](factory)
	reg, _ := pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd: func(*corev1.Pod, bool) { panic("boom") }, // recovered, and logged
	}, informer.HandlerOptions{Name: "broken"})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	informer.WaitForCacheSync(ctx, reg) // the handler has had its initial list
	// Output:
	// "msg"="informer error" "error"=null "informer"="pods" "resource"="pods" "resourceVersion"="…" "error"="processor: handler \"broken\" panicked on Add \"shop/web\": boom" "error_kind"="HandlerPanic" "handler"="broken" "namespace"="shop" "name"="web"
}
