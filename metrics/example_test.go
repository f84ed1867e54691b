package metrics_test

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/workqueue"
)

// A program makes one Registry, passes it to the parts it wants measured,
// and serves it: here the text a scraper of /metrics (reg.Handler()) would
// read, cut to the queue's depth and adds.
func Example() {
	reg := new(metrics.Registry)
	q := workqueue.New(workqueue.Options[string]{Name: "pods", Metrics: reg})
	defer q.ShutDown()
	q.Add("shop/web")
	q.Add("shop/db")
	q.Add("shop/web") // already waiting: not an add

	var text strings.Builder
	_ = reg.WriteText(&text)
	lines := bufio.NewScanner(strings.NewReader(text.String()))
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "workqueue_depth") || strings.HasPrefix(l, "workqueue_adds") {
			fmt.Println(l)
		}
	}
	// Output:
	// workqueue_adds_total{name="pods"} 2
	// workqueue_depth{name="pods"} 2
}
