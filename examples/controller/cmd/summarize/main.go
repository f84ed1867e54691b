package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/examples/controller"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/rest"
)

func main() {
	kubeconfigFlag := flag.String("kubeconfig", "", "kubeconfig of the cluster to manage (a list, as $KUBECONFIG)")
	fake := flag.Bool("fake", false, "run against an embedded fake API server with sample objects")
	namespace := flag.String("namespace", "", "namespace to manage (default all)")
	workers := flag.Int("workers", 2, "keys handled at once")
	duration := flag.Duration("duration", 0, "stop after this long (default: until Ctrl-C)")
	var fleet fleetFlags
	fleet.register(flag.CommandLine)
	listen := flag.String("listen", "", "address of /metrics, /healthz and /readyz, such as 127.0.0.1:8080 (default: none)")
	flag.Parse()
	if err := run(*kubeconfigFlag, *fake, *namespace, *workers, *duration, *listen, &fleet); err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(1)
	}
}

func run(kubeconfigPaths string, fake bool, namespace string, workers int, duration time.Duration, listen string, fleet *fleetFlags) error {
	// SIGTERM is how Kubernetes stops a pod: the leader then releases its
	// lease on the way out.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	var cfg rest.Config
	switch {
	case fake:
		srv, err := fakeServer()
		if err != nil {
			return err
		}
		defer srv.Close()
		cfg = rest.Config{Host: srv.URL()}
	case kubeconfigPaths != "":
		// A list, as $KUBECONFIG is, loaded by kubectl's rules.
		l, err := kubeconfig.LoadingRules{Paths: filepath.SplitList(kubeconfigPaths)}.Load()
		if err != nil {
			return err
		}
		cfg = l.Config
	default:
		return fmt.Errorf("give -kubeconfig or -fake")
	}
	reg := new(metrics.Registry)
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := controller.Options{Namespace: namespace, Workers: workers, Logger: logger, Metrics: reg}
	if err := fleet.apply(&opts); err != nil {
		return err
	}
	c, err := controller.New(cfg, opts)
	if err != nil {
		return err
	}
	if listen == "" {
		return c.Run(ctx)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	wait, err := serve(ctx, listen, probes(reg, c.Ready))
	if err != nil {
		return err
	}
	logger.Info("serving /metrics, /healthz and /readyz", "addr", listen)
	runErr := c.Run(ctx)
	stop()
	return errors.Join(runErr, wait())
}

// fakeServer starts the in-process API server with a Deployment, its Pods
// and a Service.
func fakeServer() (*fakeapi.Server, error) {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		return nil, err
	}
	web := map[string]string{"app": "web"}
	containers := []corev1.Container{{Name: "main", Image: "registry.example/web:1"}}
	objs := []runtime.Object{
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: web},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: corev1.PodSpec{Containers: containers}},
			},
		},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: corev1.ServiceSpec{Selector: web}},
	}
	for i := range 3 {
		objs = append(objs, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprint("web-", i), Labels: web},
			Spec:       corev1.PodSpec{Containers: containers},
		})
	}
	for _, o := range objs {
		if _, err := srv.Create(o); err != nil {
			srv.Close()
			return nil, err
		}
	}
	return srv, nil
}
