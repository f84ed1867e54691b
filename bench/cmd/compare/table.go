package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// figure is one row: a measured quantity, both sides' samples (one per
// round) and which direction is better.
type figure struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit"`
	Ours     float64 `json:"ours"`
	ClientGo float64 `json:"clientgo"`
	Better   string  `json:"better"` // "lower" or "higher"

	ours, clientGo []float64
}

// results collects figures in the order they are first measured.
type results struct {
	rows   []*figure
	byName map[string]*figure
	charts chartData
}

func newResults() *results { return &results{byName: map[string]*figure{}} }

func (r *results) add(name, unit, better, side string, v float64) {
	f := r.byName[name]
	if f == nil {
		f = &figure{Name: name, Unit: unit, Better: better}
		r.byName[name] = f
		r.rows = append(r.rows, f)
	}
	if side == "ours" {
		f.ours = append(f.ours, v)
	} else {
		f.clientGo = append(f.clientGo, v)
	}
}

// finish sets each figure to the median of its rounds.
func (r *results) finish() {
	for _, f := range r.rows {
		f.Ours, f.ClientGo = median(f.ours), median(f.clientGo)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// markdown writes the table.
func (r *results) markdown(w io.Writer) {
	fmt.Fprintln(w, "| figure | unit | ours | client-go | ours / client-go | better |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, f := range r.rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", f.Name, f.Unit, num(f.Ours), num(f.ClientGo), ratio(f), f.Better)
	}
}

func ratio(f *figure) string {
	if f.ClientGo == 0 || math.IsNaN(f.Ours) || math.IsNaN(f.ClientGo) {
		return "–"
	}
	return fmt.Sprintf("%.2f", f.Ours/f.ClientGo)
}

// num prints three significant digits.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

// writeJSON writes the figures as an array of {name, unit, ours, clientgo, better}.
func (r *results) writeJSON(path string) error {
	out := make([]figure, 0, len(r.rows))
	for _, f := range r.rows {
		g := *f
		for _, p := range []*float64{&g.Ours, &g.ClientGo} {
			if math.IsNaN(*p) {
				*p = 0
			}
		}
		out = append(out, g)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
