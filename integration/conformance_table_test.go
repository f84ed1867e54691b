package integration

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// conformanceTable collects the outcome of every scenario and probe against
// every server, and renders them as Markdown. It is safe for concurrent use.
type conformanceTable struct {
	mu      sync.Mutex                      // guards everything below
	rows    []string                        // scenario rows, in the order first seen
	cells   map[string]map[string]*cell     // row -> column -> outcome
	probes  []string                        // probe names, in the order first seen
	answers map[string]map[string]probeCell // probe -> column -> answer
	skipped map[string]string               // column -> why it did not run
}

// probeCell is one server's answer to one probe: Key is what is compared
// between servers; Note is shown but not compared (timings, messages).
type probeCell struct {
	Key, Note string
	Failed    bool
}

func newConformanceTable() *conformanceTable {
	return &conformanceTable{cells: map[string]map[string]*cell{}, answers: map[string]map[string]probeCell{},
		skipped: map[string]string{}}
}

var columns = []string{fakeapiColumn, realColumn}

func (tb *conformanceTable) set(row, column string, c *cell) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.cells[row] == nil {
		tb.cells[row] = map[string]*cell{}
		tb.rows = append(tb.rows, row)
	}
	tb.cells[row][column] = c
}

func (tb *conformanceTable) setProbe(name, column string, a probeCell) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.answers[name] == nil {
		tb.answers[name] = map[string]probeCell{}
		tb.probes = append(tb.probes, name)
	}
	tb.answers[name][column] = a
}

func (tb *conformanceTable) skipColumn(column, why string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.skipped[column] = why
}

// markdown renders both tables.
func (tb *conformanceTable) markdown() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var b strings.Builder
	b.WriteString("| scenario | " + strings.Join(columns, " | ") + " |\n|---|" + strings.Repeat("---|", len(columns)) + "\n")
	for _, row := range tb.rows {
		b.WriteString("| " + row)
		for _, col := range columns {
			b.WriteString(" | " + escapeCell(tb.cellText(row, col)))
		}
		b.WriteString(" |\n")
	}
	b.WriteString("\n| wire probe | " + strings.Join(columns, " | ") + " | same |\n|---|" +
		strings.Repeat("---|", len(columns)) + "---|\n")
	for _, name := range tb.probes {
		b.WriteString("| " + name)
		for _, col := range columns {
			b.WriteString(" | " + escapeCell(tb.probeText(name, col)))
		}
		b.WriteString(" | " + tb.verdict(name) + " |\n")
	}
	return b.String()
}

func (tb *conformanceTable) cellText(row, col string) string {
	if why, ok := tb.skipped[col]; ok {
		return why
	}
	if c := tb.cells[row][col]; c != nil {
		return c.String()
	}
	return "not run"
}

func (tb *conformanceTable) probeText(name, col string) string {
	if why, ok := tb.skipped[col]; ok {
		return why
	}
	a, ok := tb.answers[name][col]
	switch {
	case !ok:
		return "not run"
	case a.Failed:
		return "**FAIL** (see log)"
	case a.Note != "":
		return a.Key + " (" + shorten(a.Note, 90) + ")"
	}
	return a.Key
}

// verdict compares the two columns' keys: "yes", "**no**", "no (known)" (a
// difference listed in knownDifferences) or "–" when a column is missing.
func (tb *conformanceTable) verdict(name string) string {
	fake, okF := tb.answers[name][fakeapiColumn]
	kube, okR := tb.answers[name][realColumn]
	switch {
	case !okF || !okR || fake.Failed || kube.Failed:
		return "–"
	case fake.Key == kube.Key:
		return "yes"
	case knownDifferences[name] != "":
		return "no (known)"
	}
	return "**no**"
}

// checkProbes fails t for every difference between the servers that is not
// a known one, and for every known one that no longer differs (the list must
// say what is true).
func (tb *conformanceTable) checkProbes(t *testing.T) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, name := range tb.probes {
		fake, okF := tb.answers[name][fakeapiColumn]
		kube, okR := tb.answers[name][realColumn]
		if !okF || !okR || fake.Failed || kube.Failed {
			continue
		}
		known := knownDifferences[name]
		switch {
		case fake.Key != kube.Key && known == "":
			t.Errorf("fakeapi differs from kube-apiserver on %q:\n  kube-apiserver: %s\n  fakeapi:        %s\n  differing parts: %s",
				name, kube.Key, fake.Key, differingParts(kube.Key, fake.Key))
		case fake.Key == kube.Key && known != "":
			t.Errorf("probe %q is listed in knownDifferences but the servers now agree (%s): remove it", name, kube.Key)
		}
	}
}

// differingParts names the parts, separated by "; ", in which two probe
// answers differ, so that the last line of a long log shows them.
func differingParts(kube, fake string) string {
	k, f := strings.Split(kube, "; "), strings.Split(fake, "; ")
	var diff []string
	for i := range max(len(k), len(f)) {
		var kp, fp string
		if i < len(k) {
			kp = k[i]
		}
		if i < len(f) {
			fp = f[i]
		}
		if kp != fp {
			diff = append(diff, fmt.Sprintf("[kube-apiserver %q, fakeapi %q]", kp, fp))
		}
	}
	return strings.Join(diff, " ")
}

// docMarkers delimit the generated part of docs/fakeapi.md.
const (
	docBegin = "<!-- conformance table: generated by TestConformance -conformance.update; do not edit -->"
	docEnd   = "<!-- end of conformance table -->"
)

// writeDoc replaces the generated part of the doc at path with the tables.
func (tb *conformanceTable) writeDoc(t *testing.T, path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	begin, end := bytes.Index(doc, []byte(docBegin)), bytes.Index(doc, []byte(docEnd))
	if begin < 0 || end < begin {
		return fmt.Errorf("%s: markers %q ... %q not found", path, docBegin, docEnd)
	}
	var b bytes.Buffer
	b.Write(doc[:begin+len(docBegin)])
	fmt.Fprintf(&b, "\n\nProduced on %s by `go test -count=1 -run TestConformance ./integration/ -conformance.update`.\n\n",
		time.Now().UTC().Format("2006-01-02"))
	b.WriteString(tb.markdown())
	b.WriteString("\n")
	b.Write(doc[end:])
	t.Logf("wrote the conformance table into %s", path)
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// escapeCell keeps a cell on one line and its pipes out of the table syntax.
func escapeCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// shorten keeps a note readable in a table cell.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
