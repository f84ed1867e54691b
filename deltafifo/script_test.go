package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestScripts replays the delta sequences in testdata/*.txt, one queue per
// file, each read like etcd-io/raft's interaction tests: a comment saying
// why, the calls, and the exact output a consumer observes. Regenerate the
// expected output after a deliberate change with
//
//	go test ./deltafifo -run TestScripts -rewrite
//
// and read the diff: every changed line is a change of behaviour.
//
// The commands (objects are pods in namespace "ns", written name@rv; a
// name of "nil" is a nil object, and "@rv" one without a name):
//
//	new [known=(a@1,...)] [atomic-relist] [keep-all-updates] [inline]
//	    a new queue whose KnownObjects, the consumer's cache, holds known;
//	    inline turns the inline hand-off on, with the consumer's apply
//	add|update|delete obj...
//	    one call per object, in order; prints errors, ignored deletes and
//	    what went inline
//	replace [rv=N] obj...    one Replace of the listed objects
//	resync | bookmark rv=N | close
//	pop [reply=ok|requeue|fail]
//	pop-batch max=N [reply=...]
//	    one Pop (or PopBatch); the consumer applies the batch to its cache
//	    when it replies ok. Lines of input are commands run inside the
//	    process function, before it applies: writes racing the consumer.
//	drain [max=N]            Pop (or PopBatch) until nothing is queued
//	stats | synced | known   the queue's Stats, HasSynced, the cache
//
// A batch prints as a header (batch, relist or marker, with its
// resourceVersion) and then one indented line per Item: its key and its
// deltas, oldest first (a tombstone as Tombstone), "(initial)" when
// InInitialList is set.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &script{}
		datadriven.RunTest(t, path, s.run)
	})
}

// script is one file's queue and consumer.
type script struct {
	q     *Queue
	known *store
	out   *strings.Builder // where the inline hand-off prints, during a write
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && s.q == nil {
		d.Fatalf(t, "%s before new", d.Cmd)
	}
	var out strings.Builder
	switch d.Cmd {
	case "new":
		s.build(t, d)
	case "add", "update", "delete":
		s.write(&out, d.Cmd, positional(t, d))
	case "replace":
		var rv string
		d.MaybeScanArgs(t, "rv", &rv)
		printErr(&out, s.q.Replace(positional(t, d), rv))
	case "resync":
		printErr(&out, s.q.Resync())
	case "bookmark":
		var rv string
		d.MaybeScanArgs(t, "rv", &rv)
		printErr(&out, s.q.Bookmark(rv))
	case "close":
		s.q.Close()
	case "pop", "pop-batch":
		s.pop(t, d, &out)
	case "drain":
		max := 1
		d.MaybeScanArgs(t, "max", &max)
		for s.q.queuedUnits() > 0 {
			printErr(&out, s.q.PopBatch(context.Background(), max, s.consumer(t, &out, "ok", nil)))
		}
	case "stats":
		st := s.q.Stats()
		fmt.Fprintf(&out, "depth=%d deltas=%d in-flight=%d\n", st.Depth, st.Deltas, st.InFlight)
		fmt.Fprintf(&out, "enqueued=%d coalesced=%d ignored-deletes=%d delivered=%d requeued=%d failed=%d\n",
			st.Enqueued, st.Coalesced, st.IgnoredDeletes, st.Delivered, st.Requeued, st.Failed)
	case "synced":
		fmt.Fprintln(&out, s.q.HasSynced())
	case "known":
		printKnown(&out, s.known)
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return out.String()
}

// build starts the file's queue.
func (s *script) build(t *testing.T, d *datadriven.TestData) {
	s.known = newStore()
	if arg, ok := d.Arg("known"); ok {
		for _, v := range arg.Vals {
			p := scriptPod(t, v).(*corev1.Pod)
			s.known.objs["ns/"+p.Name] = p
		}
	}
	opts := Options{KnownObjects: s.known, AtomicRelist: d.HasArg("atomic-relist"), KeepAllUpdates: d.HasArg("keep-all-updates")}
	if d.HasArg("inline") {
		opts.Inline = func(b Batch) error {
			s.out.WriteString("inline ")
			printBatch(s.out, b)
			s.known.apply(b)
			return nil
		}
	}
	s.q = New(opts)
}

// write calls Add, Update or Delete once per object.
func (s *script) write(out *strings.Builder, cmd string, objs []runtime.Object) {
	write := map[string]func(runtime.Object) error{"add": s.q.Add, "update": s.q.Update, "delete": s.q.Delete}[cmd]
	prev, prevOut := s.q.Stats().IgnoredDeletes, s.out
	s.out = out
	defer func() { s.out = prevOut }()
	for _, obj := range objs {
		printErr(out, write(obj))
		if ignored := s.q.Stats().IgnoredDeletes; ignored != prev {
			fmt.Fprintf(out, "ignored: %s of %s (neither queued nor known)\n", cmd, scriptName(obj))
			prev = ignored
		}
	}
}

// pop runs one Pop or PopBatch, with the reply and the racing writes the
// directive asks for.
func (s *script) pop(t *testing.T, d *datadriven.TestData, out *strings.Builder) {
	reply := "ok"
	d.MaybeScanArgs(t, "reply", &reply)
	max := 1
	d.MaybeScanArgs(t, "max", &max)
	if max >= 1 && s.q.queuedUnits() == 0 && !s.closed() {
		out.WriteString("nothing queued\n") // Pop would wait forever
		return
	}
	var during []string
	if d.Input != "" {
		during = strings.Split(d.Input, "\n")
	}
	process := s.consumer(t, out, reply, during)
	if d.Cmd == "pop" {
		printErr(out, s.q.Pop(context.Background(), process))
		return
	}
	printErr(out, s.q.PopBatch(context.Background(), max, process))
}

// consumer is a process function: it prints the batch, runs the racing
// writes, then applies the batch to the cache and replies as told.
func (s *script) consumer(t *testing.T, out *strings.Builder, reply string, during []string) func(Batch) error {
	return func(b Batch) error {
		printBatch(out, b)
		for _, line := range during {
			cmd, args, err := datadriven.ParseLine(line)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(cmd, "pop") || cmd == "drain" {
				t.Fatalf("%s inside a pop: Pops take turns, it would wait forever", cmd)
			}
			fmt.Fprintf(out, "during the pop: %s\n", line)
			out.WriteString(s.run(t, &datadriven.TestData{Cmd: cmd, CmdArgs: args}))
		}
		switch reply {
		case "requeue":
			return ErrRequeue
		case "fail":
			return errors.New("consumer failed")
		}
		s.known.apply(b)
		return nil
	}
}

// closed reports whether Close was called (a Pop then returns at once).
func (s *script) closed() bool {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	return s.q.closed
}

// positional returns the directive's objects, the arguments without values.
func positional(t *testing.T, d *datadriven.TestData) []runtime.Object {
	var objs []runtime.Object
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 && strings.Contains(a.Key, "@") || a.Key == "nil" {
			objs = append(objs, scriptPod(t, a.Key))
		}
	}
	return objs
}

// scriptPod parses name@rv; "nil" is a nil object.
func scriptPod(t *testing.T, spec string) runtime.Object {
	if spec == "nil" {
		return nil
	}
	name, rv, ok := strings.Cut(spec, "@")
	if !ok {
		t.Fatalf("object %q is not name@rv", spec)
	}
	return pod(name, rv)
}

// scriptName names an object as the script wrote it.
func scriptName(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil || obj == nil {
		return "nil"
	}
	return m.GetName() + "@" + m.GetResourceVersion()
}

// printBatch writes a batch as the header and one line per Item.
func printBatch(out *strings.Builder, b Batch) {
	switch {
	case b.Relist:
		out.WriteString("relist")
	case len(b.Items) == 0:
		out.WriteString("marker")
	default:
		out.WriteString("batch")
	}
	if b.ResourceVersion != "" {
		out.WriteString(" rv=" + b.ResourceVersion)
	}
	out.WriteString("\n")
	for _, it := range b.Items {
		line := batchLine(Batch{Items: []Item{it}})
		if it.InInitialList {
			line += " (initial)"
		}
		out.WriteString("  " + line + "\n")
	}
}

// printKnown writes the consumer's cache, sorted by key.
func printKnown(out *strings.Builder, s *store) {
	keys := s.ListKeys()
	if len(keys) == 0 {
		out.WriteString("(empty)\n")
		return
	}
	words := make([]string, 0, len(keys))
	for _, k := range keys {
		obj, _ := s.Get(k)
		words = append(words, k+"@"+obj.(*corev1.Pod).ResourceVersion)
	}
	out.WriteString(strings.Join(words, " ") + "\n")
}

func printErr(out *strings.Builder, err error) {
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
	}
}
