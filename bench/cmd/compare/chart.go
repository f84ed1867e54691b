package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// chartData is what the charts are drawn from.
type chartData struct {
	sync       []syncPoint
	relistTag  string                  // the scenario the relist chart shows: the largest JSON one
	relistN    int                     // its size
	relistHeap map[string][]heapSample // by side
	steady     map[string]uint64       // by side: the heap before that relist
}

// syncPoint is one cold sync.
type syncPoint struct {
	Tag, Enc, Side      string
	N                   int
	Seconds, RetainedMB float64
	PeakMB              float64
}

// relist keeps the heap samples of the largest JSON relist seen.
func (c *chartData) relist(side, tag string, steady uint64, samples []heapSample) {
	var size int // tags are "<size>k <encoding>"
	fmt.Sscanf(tag, "%dk", &size)
	if lastWord(tag) != "json" || size < c.relistN {
		return
	}
	if size > c.relistN {
		c.relistN, c.relistTag = size, tag
		c.relistHeap, c.steady = map[string][]heapSample{}, map[string]uint64{}
	}
	c.relistHeap[side], c.steady[side] = samples, steady
}

func lastWord(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ' ' {
			return s[i+1:]
		}
	}
	return s
}

var sideColors = map[string]color.Color{
	"ours":      color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"client-go": color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// draw writes sync-time.svg, sync-heap.svg and relist-heap.svg into dir.
func (c *chartData) draw(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	charts := []struct {
		file, title, y string
		value          func(syncPoint) float64
	}{
		{"sync-time.svg", "Cold sync: time to synced", "seconds", func(p syncPoint) float64 { return p.Seconds }},
		{"sync-heap.svg", "Cold sync: heap retained once synced", "MB", func(p syncPoint) float64 { return p.RetainedMB }},
	}
	for _, ch := range charts {
		if err := c.drawSync(filepath.Join(dir, ch.file), ch.title, ch.y, ch.value); err != nil {
			return err
		}
	}
	return c.drawRelist(filepath.Join(dir, "relist-heap.svg"))
}

func (c *chartData) drawSync(path, title, ylabel string, value func(syncPoint) float64) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "pods in the cache (log scale)"
	p.Y.Label.Text = ylabel
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	for _, enc := range []string{"json", "protobuf"} {
		for _, side := range []string{"ours", "client-go"} {
			pts := c.points(enc, side, value)
			if len(pts) == 0 {
				continue
			}
			line, marks, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			line.Color, marks.Color = sideColors[side], sideColors[side]
			if enc == "protobuf" {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(line, marks)
			p.Legend.Add(side+" "+enc, line, marks)
		}
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

// points returns the median value at each size, without StripManagedFields.
func (c *chartData) points(enc, side string, value func(syncPoint) float64) plotter.XYs {
	bySize := map[int][]float64{}
	for _, p := range c.sync {
		if p.Enc == enc && p.Side == side && lastWord(p.Tag) == enc {
			bySize[p.N] = append(bySize[p.N], value(p))
		}
	}
	sizes := slices.Sorted(func(yield func(int) bool) {
		for n := range bySize {
			if !yield(n) {
				return
			}
		}
	})
	var xy plotter.XYs
	for _, n := range sizes {
		xy = append(xy, plotter.XY{X: float64(n), Y: median(bySize[n])})
	}
	return xy
}

func (c *chartData) drawRelist(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Relist of %s pods: heap in use (solid) and live (dashed)", c.relistTag)
	p.X.Label.Text = "seconds since the relist was forced"
	p.Y.Label.Text = "MB"
	p.Legend.Top = true
	for _, side := range []string{"ours", "client-go"} {
		samples := c.relistHeap[side]
		if len(samples) == 0 {
			continue
		}
		inUse, live := make(plotter.XYs, len(samples)), make(plotter.XYs, len(samples))
		for i, s := range samples {
			inUse[i] = plotter.XY{X: s.At.Seconds(), Y: mb(s.InUse)}
			live[i] = plotter.XY{X: s.At.Seconds(), Y: mb(s.Live)}
		}
		l1, err := plotter.NewLine(inUse)
		if err != nil {
			return err
		}
		l2, err := plotter.NewLine(live)
		if err != nil {
			return err
		}
		l1.Color, l2.Color = sideColors[side], sideColors[side]
		l2.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l1, l2)
		p.Legend.Add(side+" in use", l1)
		p.Legend.Add(side+" live", l2)
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
