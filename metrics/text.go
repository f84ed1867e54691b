package metrics

import (
	"bufio"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// TextContentType is the Content-Type of the Prometheus text exposition
// format, version 0.0.4, which WriteText writes.
const TextContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes every family in the Prometheus text exposition format.
func (r *Registry) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, f := range r.Gather() {
		writeFamily(bw, f)
	}
	return bw.Flush()
}

// Handler serves WriteText over HTTP, for a program's /metrics.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", TextContentType)
		_ = r.WriteText(w) // a failed write is the scraper's closed connection
	})
}

func writeFamily(w *bufio.Writer, f Family) {
	d := f.Desc
	w.WriteString("# HELP " + d.Name + " " + escapeHelp(d.Help) + "\n")
	w.WriteString("# TYPE " + d.Name + " " + d.Kind.String() + "\n")
	for _, s := range f.Samples {
		if d.Kind != Histogram {
			writeLine(w, d.Name, d.Labels, s.LabelValues, "", "", s.Value)
			continue
		}
		for i, le := range d.Buckets {
			writeLine(w, d.Name+"_bucket", d.Labels, s.LabelValues, "le", formatFloat(le), float64(s.Buckets[i]))
		}
		writeLine(w, d.Name+"_bucket", d.Labels, s.LabelValues, "le", "+Inf", float64(s.Count))
		writeLine(w, d.Name+"_sum", d.Labels, s.LabelValues, "", "", s.Sum)
		writeLine(w, d.Name+"_count", d.Labels, s.LabelValues, "", "", float64(s.Count))
	}
}

// writeLine writes one sample line; extraName/extraValue is the le label of
// a bucket, after the family's own labels.
func writeLine(w *bufio.Writer, name string, names, values []string, extraName, extraValue string, v float64) {
	w.WriteString(name)
	n := min(len(names), len(values))
	if n > 0 || extraName != "" {
		w.WriteByte('{')
		for i := range n {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(names[i] + `="` + escapeLabel(values[i]) + `"`)
		}
		if extraName != "" {
			if n > 0 {
				w.WriteByte(',')
			}
			w.WriteString(extraName + `="` + extraValue + `"`)
		}
		w.WriteByte('}')
	}
	w.WriteString(" " + formatFloat(v) + "\n")
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }
