package bench

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/internal/realpod"
	ourrest "github.com/seed31a95821/informer/rest"
)

// podWriter is one write client: ours (client.Resource) or client-go's
// typed clientset, both writing realistic pods (internal/realpod) as JSON.
type podWriter interface {
	create(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error)
	update(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error)
	get(ctx context.Context, ns, name string) (*corev1.Pod, error)
}

type ourWriter struct{ r *client.Resource[*corev1.Pod] }

func (w ourWriter) create(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return w.r.Create(ctx, p, metav1.CreateOptions{})
}

func (w ourWriter) update(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return w.r.Update(ctx, p, metav1.UpdateOptions{})
}

func (w ourWriter) get(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return w.r.Get(ctx, ns, name, metav1.GetOptions{})
}

type clientGoWriter struct{ cs kubernetes.Interface }

func (w clientGoWriter) create(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return w.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
}

func (w clientGoWriter) update(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return w.cs.CoreV1().Pods(p.Namespace).Update(ctx, p, metav1.UpdateOptions{})
}

func (w clientGoWriter) get(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return w.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

// writerImpls builds each side's client for a server at url, both with
// JSON and with no client-side rate limit.
var writerImpls = []struct {
	name string
	make func(b *testing.B, url string) podWriter
}{
	{"informer", func(b *testing.B, url string) podWriter {
		c, err := client.New(ourrest.Config{Host: url, ContentType: ourrest.ContentTypeJSON, QPS: -1}, client.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.CloseIdleConnections)
		r, err := client.For[*corev1.Pod](c)
		if err != nil {
			b.Fatal(err)
		}
		return ourWriter{r}
	}},
	{"client-go", func(b *testing.B, url string) podWriter {
		rc := &rest.Config{Host: url, QPS: -1}
		rc.ContentType, rc.AcceptContentTypes = "application/json", "application/json"
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			b.Fatal(err)
		}
		return clientGoWriter{cs}
	}},
}

// BenchmarkWriteClient: the write client, ours against client-go's typed
// clientset, each sending create, update and get of realistic pods
// (about 7 KB of JSON) to a fakeapi server over loopback HTTP. One op is
// one request and its decoded answer. The server runs in this process, so
// ns/op, B/op and allocs/op include its share: the same requests on both
// sides, so the differences are the clients'. update writes one pod back
// with the resourceVersion of the previous answer, as a controller does.
func BenchmarkWriteClient(b *testing.B) {
	for _, op := range []string{"create", "update", "get"} {
		for _, impl := range writerImpls {
			b.Run(fmt.Sprintf("op=%s/impl=%s", op, impl.name), func(b *testing.B) {
				srv, err := fakeapi.NewServer(fakeapi.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(srv.Close)
				w := impl.make(b, srv.URL())
				ctx := context.Background()
				cur, err := w.create(ctx, writePod(0))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				i := 1
				for b.Loop() {
					switch op {
					case "create":
						_, err = w.create(ctx, writePod(i))
					case "update":
						cur.Annotations["bench.informer/write"] = strconv.Itoa(i)
						cur, err = w.update(ctx, cur)
					case "get":
						_, err = w.get(ctx, cur.Namespace, cur.Name)
					}
					if err != nil {
						b.Fatal(op, err)
					}
					i++
				}
			})
		}
	}
}

// writePod is realpod's pod i in "default", a namespace every server
// has (realpod's team-NN namespaces exist only where they were created).
func writePod(i int) *corev1.Pod {
	p := realpod.New(i)
	p.Namespace = "default"
	return p
}
