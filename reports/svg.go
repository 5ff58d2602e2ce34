package reports

import (
	"fmt"
	"html"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// WriteSVG renders the run's timeline as an SVG a person reads at a
// glance: replication lag (records) and commit rate over time, fault
// windows as shaded bands (inject to heal, pause to resume), kills and
// terminations as marks, and the verdict in the title.
func (r *Report) WriteSVG(w io.Writer) error {
	const (
		width, height  = 960, 360
		left, right    = 60, 20
		top, bottom    = 40, 90
		plotW, plotH   = width - left - right, height - top - bottom
		bandH          = 14
		faultBandStart = height - bottom + 28
	)
	var samples []Event
	var end time.Duration
	for _, e := range r.Timeline {
		end = max(end, e.At)
		if e.Kind == "sample" {
			samples = append(samples, e)
		}
	}
	if end <= 0 {
		end = time.Second
	}
	x := func(d time.Duration) float64 { return left + float64(plotW)*float64(d)/float64(end) }
	var maxLag, maxRate float64 = 1, 1
	rates := make([]float64, len(samples))
	for i, s := range samples {
		maxLag = max(maxLag, float64(s.Lag))
		if i > 0 {
			dt := (s.At - samples[i-1].At).Seconds()
			if dt > 0 && s.Commits >= samples[i-1].Commits {
				rates[i] = float64(s.Commits-samples[i-1].Commits) / dt
			}
		}
		maxRate = max(maxRate, rates[i])
	}
	yLag := func(v float64) float64 { return top + float64(plotH)*(1-v/maxLag) }
	yRate := func(v float64) float64 { return top + float64(plotH)*(1-v/maxRate) }

	var b strings.Builder
	status := "OK"
	if !r.Verdict.OK() {
		var parts []string
		for k, n := range r.Verdict.Counts {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", k, n))
			}
		}
		slices.Sort(parts)
		status = "VIOLATIONS " + strings.Join(parts, " ")
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14" font-weight="bold">%s — seed %d — %s</text>`+"\n", left, html.EscapeString(r.Name), r.Seed, html.EscapeString(status))
	fmt.Fprintf(&b, `<text x="%d" y="32" fill="#555">replay: %s</text>`+"\n", left, html.EscapeString(r.Replay))
	// Fault windows.
	open := map[string]time.Duration{}
	row := 0
	band := func(from, to time.Duration, label, color string) {
		y := faultBandStart + (row%3)*(bandH+2)
		row++
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" opacity="0.5"><title>%s</title></rect>`+"\n",
			x(from), y, max(2, x(to)-x(from)), bandH, color, html.EscapeString(label))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" opacity="0.08"/>`+"\n", x(from), top, max(1, x(to)-x(from)), plotH, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="9">%s</text>`+"\n", x(from)+2, y+10, html.EscapeString(label))
	}
	for _, e := range r.Timeline {
		switch e.Kind {
		case "inject":
			open[e.Target] = e.At
		case "heal":
			if from, ok := open[e.Target]; ok {
				band(from, e.At, e.Target, "#e4572e")
				delete(open, e.Target)
			}
		case "pause":
			open["pause "+e.Target] = e.At
		case "resume":
			if from, ok := open["pause "+e.Target]; ok {
				band(from, e.At, "pause "+e.Target, "#7768ae")
				delete(open, "pause "+e.Target)
			}
		case "kill", "term", "scale", "add-partitions":
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#222" stroke-dasharray="3,2"><title>%s %s %s</title></line>`+"\n",
				x(e.At), x(e.At), top, top+plotH, html.EscapeString(e.Kind), html.EscapeString(e.Target), html.EscapeString(e.Detail))
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="9" transform="rotate(-90 %.1f %d)">%s %s</text>`+"\n",
				x(e.At)-2, top+plotH-2, x(e.At)-2, top+plotH-2, html.EscapeString(e.Kind), html.EscapeString(e.Target))
		}
	}
	for target, from := range open {
		band(from, end, target+" (never healed)", "#b00")
	}
	// Axes.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", left, top+plotH, left+plotW, top+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", left, top, left, top+plotH)
	for i := 0; i <= 4; i++ {
		d := end * time.Duration(i) / 4
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%.1fs</text>`+"\n", x(d), top+plotH+14, d.Seconds())
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#1f77b4" text-anchor="end">lag %.0f</text>`+"\n", left-4, top+8, maxLag)
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#2ca02c">commits/s %.0f</text>`+"\n", left+plotW-80, top+8, maxRate)
	// Series.
	poly := func(ys func(i int) float64, color string) {
		if len(samples) == 0 {
			return
		}
		var pts []string
		for i, s := range samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.At), ys(i)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.Join(pts, " "))
	}
	poly(func(i int) float64 { return yLag(float64(samples[i].Lag)) }, "#1f77b4")
	poly(func(i int) float64 { return yRate(rates[i]) }, "#2ca02c")
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSVGFile writes the timeline next to a saved report.
func (r *Report) WriteSVGFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write timeline %s: %w", path, err)
	}
	if err := r.WriteSVG(f); err != nil {
		f.Close()
		return fmt.Errorf("write timeline %s: %w", path, err)
	}
	return f.Close()
}
