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
	// OursRounds and ClientGoRounds are every round's value, in the
	// order measured: the spread behind each median.
	OursRounds     []float64 `json:"oursRounds"`
	ClientGoRounds []float64 `json:"clientgoRounds"`

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
		f.OursRounds, f.ClientGoRounds = f.ours, f.clientGo
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

// markdown writes the table: each side's median with the range of its
// rounds beside it, and the ratio of the medians with the range of the
// per-round ratios, so that a figure that moved a lot between rounds says
// so on its own line.
func (r *results) markdown(w io.Writer) {
	fmt.Fprintln(w, "| figure | unit | ours (min–max) | client-go (min–max) | ours / client-go (per-round range) | better |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, f := range r.rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", f.Name, f.Unit, spread(f.Ours, f.ours), spread(f.ClientGo, f.clientGo),
			ratioSpread(f), f.Better)
	}
}

// spread prints a median and, when there was more than one round, the
// smallest and largest round.
func spread(med float64, v []float64) string {
	if len(v) < 2 {
		return num(med)
	}
	return fmt.Sprintf("%s (%s–%s)", num(med), num(slices.Min(v)), num(slices.Max(v)))
}

// ratioSpread prints the ratio of the medians and, when both sides ran
// the same rounds, the range of the ratios round by round: the ratio of
// the medians hides whether one round was the other way round.
func ratioSpread(f *figure) string {
	r := ratio(f)
	if r == "–" || len(f.ours) < 2 || len(f.ours) != len(f.clientGo) {
		return r
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range f.ours {
		if f.clientGo[i] == 0 {
			return r
		}
		x := f.ours[i] / f.clientGo[i]
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%s (%.2f–%.2f)", r, lo, hi)
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

// writeJSON writes the figures as an array of {name, unit, ours, clientgo,
// better, oursRounds, clientgoRounds}; a value that is not a number is
// written as 0.
func (r *results) writeJSON(path string) error {
	out := make([]figure, 0, len(r.rows))
	for _, f := range r.rows {
		g := *f
		g.OursRounds, g.ClientGoRounds = finite(f.ours), finite(f.clientGo)
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

func finite(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out[i] = x
		}
	}
	return out
}
