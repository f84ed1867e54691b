package informer_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docPages are the pages whose links TestDocsNameRealTests checks.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(pages, "README.md")
}

// mdLink is a Markdown link: its text and its target (path and anchor).
var mdLink = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`)

// testName is link text that names a test, an example or a benchmark.
var testName = regexp.MustCompile("^`((?:Test|Example|Benchmark)[A-Za-z0-9_]*)`$")

// The docs prove their claims by naming tests: "[`TestX`](../pkg/x_test.go)".
// A renamed or deleted test would leave the claim unproved and the reader
// looking for a function that is not there, so every such link must name a
// function the linked file defines. Every relative link must reach a file,
// and an anchor into a Markdown page must name one of its headings.
func TestDocsNameRealTests(t *testing.T) {
	checked := 0
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(withoutCode(string(text)), -1) {
			label, target := m[1], m[2]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
			}
			body, err := os.ReadFile(file)
			if err != nil {
				if info, serr := os.Stat(file); serr == nil && info.IsDir() {
					continue
				}
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !hasHeading(string(body), anchor) {
				t.Errorf("%s: link %q: %s has no heading for #%s", page, target, file, anchor)
			}
			if n := testName.FindStringSubmatch(label); n != nil {
				checked++
				if !strings.Contains(string(body), "func "+n[1]+"(") {
					t.Errorf("%s: %s is linked to %s, which does not define it", page, n[1], file)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d test links found: the pattern no longer matches the docs", checked)
	}
}

// withoutCode drops fenced code blocks and inline code, whose Go reads like
// links ("For[*corev1.Pod](factory)"), but keeps the inline code that is a
// link's text.
func withoutCode(page string) string {
	var b strings.Builder
	fenced := false
	for line := range strings.SplitSeq(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(withoutInlineCode(line))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

var inlineCode = regexp.MustCompile("`[^`]*`")

func withoutInlineCode(line string) string {
	var b strings.Builder
	last := 0
	for _, span := range inlineCode.FindAllStringIndex(line, -1) {
		if span[1] < len(line) && line[span[1]] == ']' {
			continue // a link's text: keep it
		}
		b.WriteString(line[last:span[0]])
		last = span[1]
	}
	b.WriteString(line[last:])
	return b.String()
}

// hasHeading reports whether a Markdown page has a heading whose anchor, as
// the forge derives it, is anchor.
func hasHeading(page, anchor string) bool {
	for line := range strings.SplitSeq(page, "\n") {
		if strings.HasPrefix(line, "#") && slug(strings.TrimLeft(line, "# ")) == anchor {
			return true
		}
	}
	return false
}

// slug derives a heading's anchor the way GitHub does: lower case, spaces
// to hyphens, and every other character but letters, digits, '-' and '_'
// dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// goTestRun is a "go test ... -run PATTERN ... PKG" command in a page, in a
// code span or a code block: the pattern (quoted or not) and the package.
var goTestRun = regexp.MustCompile(`go test [^` + "`" + `\n]*?-run ('[^']*'|\S+)[^` + "`" + `\n]*?(\./[^\s` + "`" + `]*|\.)(?:\s|` + "`" + `|$)`)

// A page that tells the reader to run "go test -run X ./pkg/" must name
// tests that exist there: a pattern that matches nothing runs nothing and
// passes, which is the worst way for a reading order to rot. Patterns that
// select no test on purpose ('^$', for benchmarks) are skipped.
func TestDocsRunCommandsSelectTests(t *testing.T) {
	checked := 0
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goTestRun.FindAllStringSubmatch(string(text), -1) {
			pattern := strings.ReplaceAll(strings.Trim(m[1], "'"), `\|`, "|") // a pipe escaped in a table
			if pattern == "^$" {
				continue
			}
			re, err := regexp.Compile(pattern)
			if err != nil {
				t.Errorf("%s: %q: %v", page, m[0], err)
				continue
			}
			checked++
			if !packageHasTest(t, strings.TrimSuffix(m[2], "/"), re) {
				t.Errorf("%s: %q selects no test in %s", page, m[0], m[2])
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d go test -run commands found: the pattern no longer matches the docs", checked)
	}
}

var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Example)\w*)\(`)

// packageHasTest reports whether a test or example of the package in dir
// (relative to the repository's root), or of any package below it for
// "dir/...", matches re.
func packageHasTest(t *testing.T, dir string, re *regexp.Regexp) bool {
	t.Helper()
	var files []string
	if root, ok := strings.CutSuffix(dir, "..."); ok {
		err := filepath.WalkDir(filepath.Clean(root), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		var err error
		if files, err = filepath.Glob(filepath.Join(dir, "*_test.go")); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			if re.MatchString(m[1]) {
				return true
			}
		}
	}
	return false
}
