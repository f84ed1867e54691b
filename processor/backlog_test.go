package processor

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// note is a notification of key k with an object whose name records which
// version it is, for the merge table.
func note(t EventType, k, version string) Notification {
	n := Notification{Type: t, Key: k, Object: pod("v", version)}
	if t == Update {
		n.Old = pod("v", "old-"+version)
	}
	return n
}

// summary is what a test compares of a popped notification.
type summary struct {
	Type      EventType
	Key       string
	Object    string // the object's name: its version
	Old       string // "" when nil
	Initial   bool
	FinalUnkn bool
}

func summarize(n Notification) summary {
	s := summary{Type: n.Type, Key: n.Key, Object: n.Object.(interface{ GetName() string }).GetName(),
		Initial: n.InInitialList, FinalUnkn: n.FinalStateUnknown}
	if n.Old != nil {
		s.Old = n.Old.(interface{ GetName() string }).GetName()
	}
	return s
}

func drain(b *backlog) []summary {
	var out []summary
	for nd := b.pop(); nd != nil; nd = b.pop() {
		if nd.marker {
			out = append(out, summary{Key: "<marker>"})
			continue
		}
		out = append(out, summarize(nd.n))
	}
	return out
}

// TestBacklogMergeRules is mergeRules (merge.go), one row a case,
// plus the sequences that combine rows.
func TestBacklogMergeRules(t *testing.T) {
	initialAdd := note(Add, "a", "1")
	initialAdd.InInitialList = true
	unknownDelete := note(Delete, "a", "3")
	unknownDelete.FinalStateUnknown = true
	tests := []struct {
		name      string
		push      []Notification
		want      []summary
		coalesced uint64
	}{
		{"add then update: add of the newer object",
			[]Notification{initialAdd, note(Update, "a", "2")},
			[]summary{{Type: Add, Key: "a", Object: "2", Initial: true}}, 1},
		{"add then delete: nothing",
			[]Notification{note(Add, "a", "1"), note(Delete, "a", "2")},
			nil, 2},
		{"update then update: from the first old to the newest",
			[]Notification{note(Update, "a", "2"), note(Update, "a", "3"), note(Update, "a", "4")},
			[]summary{{Type: Update, Key: "a", Object: "4", Old: "old-2"}}, 2},
		{"update then delete: the delete",
			[]Notification{note(Update, "a", "2"), unknownDelete},
			[]summary{{Type: Delete, Key: "a", Object: "3", FinalUnkn: true}}, 1},
		{"delete then delete: the newer",
			[]Notification{note(Delete, "a", "2"), note(Delete, "a", "3")},
			[]summary{{Type: Delete, Key: "a", Object: "3"}}, 1},
		{"delete then add: both, in order",
			[]Notification{note(Delete, "a", "2"), note(Add, "a", "3"), note(Update, "a", "4")},
			[]summary{{Type: Delete, Key: "a", Object: "2"}, {Type: Add, Key: "a", Object: "4"}}, 1},
		{"delete, add, delete: the first delete only",
			[]Notification{note(Delete, "a", "2"), note(Add, "a", "3"), note(Delete, "a", "4")},
			[]summary{{Type: Delete, Key: "a", Object: "2"}}, 2},
		{"keys keep the order they first arrived in",
			[]Notification{note(Update, "a", "1"), note(Update, "b", "1"), note(Update, "a", "2")},
			[]summary{{Type: Update, Key: "a", Object: "2", Old: "old-1"}, {Type: Update, Key: "b", Object: "1", Old: "old-1"}}, 1},
		{"a cancelled add leaves the others in place",
			[]Notification{note(Update, "b", "1"), note(Add, "a", "1"), note(Update, "c", "1"), note(Delete, "a", "2")},
			[]summary{{Type: Update, Key: "b", Object: "1", Old: "old-1"}, {Type: Update, Key: "c", Object: "1", Old: "old-1"}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBacklog()
			var coalesced uint64
			for _, n := range tt.push {
				coalesced += b.push(n)
			}
			assert.Equal(t, tt.coalesced, coalesced)
			assert.Equal(t, tt.want, drain(b))
			assert.Zero(t, b.len())
			assert.Empty(t, b.byKey, "nothing is left indexed")
		})
	}
}

// A key popped while it waits starts over: what the handler is given is
// not merged into any more.
func TestBacklogPopEndsAKeysMerging(t *testing.T) {
	b := newBacklog()
	b.push(note(Update, "a", "1"))
	b.pushMarker()
	assert.Equal(t, "a", b.pop().n.Key)
	b.push(note(Update, "a", "2"))
	assert.Equal(t, []summary{{Key: "<marker>"}, {Type: Update, Key: "a", Object: "2", Old: "old-2"}}, drain(b))
}

// The marker keeps its place: keys first seen after it come after it, and
// a key pending before it takes its newer versions with it.
func TestBacklogMarkerKeepsItsPlace(t *testing.T) {
	b := newBacklog()
	b.push(note(Add, "a", "1"))
	b.pushMarker()
	b.push(note(Update, "a", "2"))
	b.push(note(Add, "b", "1"))
	assert.Equal(t, []summary{
		{Type: Add, Key: "a", Object: "2"},
		{Key: "<marker>"},
		{Type: Add, Key: "b", Object: "1"},
	}, drain(b))
}

// TestReliabilityDocCoalescingTable holds the coalescing table of
// docs/reliability.md to mergeRules, its source: the doc's table must be
// the rendered rules (run with -rewrite to write it), and each rule's
// pending and newer notifications, pushed to a backlog, must give what the
// rule says the handler is told.
func TestReliabilityDocCoalescingTable(t *testing.T) {
	const path = "../docs/reliability.md"
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(doc), coalescingHeader)
	require.True(t, ok, "the table's header is missing")
	end := strings.Index(rest, "\n\n")
	require.Positive(t, end, "the table must end with a blank line")
	if want := renderMergeRules(); rest[:end] != want {
		if *rewrite {
			require.NoError(t, os.WriteFile(path, []byte(before+coalescingHeader+want+rest[end:]), 0o644))
		} else {
			t.Errorf("docs/reliability.md's coalescing table is not mergeRules (go test -run %s -rewrite):\n got: %s\nwant: %s", t.Name(), rest[:end], want)
		}
	}

	types := map[string]EventType{"Add": Add, "Update": Update, "Delete": Delete}
	for _, r := range mergeRules {
		var want []EventType
		if r.told != "nothing" {
			for _, part := range strings.Split(r.told, ",") {
				word, _, _ := strings.Cut(strings.TrimSpace(part), " ")
				want = append(want, types[word])
			}
		}
		b := newBacklog()
		b.push(note(r.pending, "a", "1"))
		b.push(note(r.newer, "a", "2"))
		var got []EventType
		for _, s := range drain(b) {
			got = append(got, s.Type)
		}
		assert.Equal(t, want, got, "rule %v", r)
	}
	assert.Len(t, mergeRules, 6, "every pair of notification types that can meet is in the table")
}

var rewrite = flag.Bool("rewrite", false, "write docs/reliability.md's coalescing table from mergeRules")

const coalescingHeader = "| pending | newer | the handler is told |"

// renderMergeRules is the doc's table below its header line.
func renderMergeRules() string {
	var b strings.Builder
	b.WriteString("\n|---|---|---|")
	for _, r := range mergeRules {
		fmt.Fprintf(&b, "\n| %s | %s | %s |", r.pending, r.newer, r.told)
	}
	return b.String()
}
