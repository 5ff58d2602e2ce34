package report

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Charts are plain SVG written by hand: no dependency, readable in any
// browser and on GitHub.

var systemColor = map[string]string{
	SysPipe: "#8c8c8c", SysPipeTxn: "#17becf", SysPipeFlush: "#bcbd22", SysReo: "#d62728", SysMM2: "#1f77b4", SysMM2EOS: "#ff7f0e",
	SysReoGroupSyncOff: "#9467bd", SysReoGroupSync: "#2ca02c", SysReoBaseline: "#e377c2",
}

func colorOf(s string) string {
	if c, ok := systemColor[s]; ok {
		return c
	}
	return "#2ca02c"
}

// axis is one workload axis a chart can show throughput along.
type axis struct {
	name  string
	value func(Workload) string
	// same reports whether two workloads differ only along this axis.
	same func(a, b Workload) bool
}

var axes = []axis{
	{"record size", func(w Workload) string { return SizeName(w.RecordBytes) },
		func(a, b Workload) bool { return a.Partitions == b.Partitions && a.Instances == b.Instances }},
	{"partitions", func(w Workload) string { return fmt.Sprint(w.Partitions) },
		func(a, b Workload) bool { return a.RecordBytes == b.RecordBytes && a.Instances == b.Instances }},
	{"instances", func(w Workload) string { return fmt.Sprint(w.Instances) },
		func(a, b Workload) bool { return a.RecordBytes == b.RecordBytes && a.Partitions == b.Partitions }},
}

// writeCharts writes the charts of r into dir and returns their file names.
func writeCharts(dir string, r *Report) ([]string, error) {
	r = r.medians()
	var names []string
	write := func(name, svg string) error {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		names = append(names, name)
		return nil
	}
	wls := r.workloads()
	var groups []string
	for _, w := range wls {
		groups = append(groups, w.Name)
	}
	if len(groups) > 0 {
		if err := write("throughput.svg", barChart("Throughput at saturation (records/s; ✗ = unverified)", groups, r, func(x Result) string { return x.Workload.Name })); err != nil {
			return nil, err
		}
	}
	// One chart per axis along which the run varied, around the first
	// (base) workload.
	if len(wls) > 0 {
		base := wls[0]
		for _, ax := range axes {
			var gs []string
			for _, w := range wls {
				if !w.ReoOnly() && ax.same(w, base) && !contains(gs, ax.value(w)) {
					gs = append(gs, ax.value(w))
				}
			}
			if len(gs) < 2 {
				continue
			}
			sub := &Report{}
			for _, x := range r.Results {
				if !x.Workload.ReoOnly() && ax.same(x.Workload, base) {
					sub.Results = append(sub.Results, x)
				}
			}
			name := "throughput-by-" + strings.ReplaceAll(ax.name, " ", "-") + ".svg"
			title := fmt.Sprintf("Throughput by %s (records/s)", ax.name)
			if err := write(name, barChart(title, gs, sub, func(x Result) string { return ax.value(x.Workload) })); err != nil {
				return nil, err
			}
		}
	}
	for _, w := range wls {
		var rs []Result
		for _, x := range r.Results {
			if x.Workload.Name == w.Name && len(x.Latency) > 0 {
				rs = append(rs, x)
			}
		}
		if len(rs) == 0 {
			continue
		}
		if err := write("latency-"+w.Name+".svg", latencyChart("Latency distribution, "+w.Name, rs)); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

const (
	chartW, chartH         = 760, 380
	padL, padR, padT, padB = 80, 150, 40, 60
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
	fontAttrs              = `font-family="sans-serif" font-size="12"`
	titleAttrs             = `font-family="sans-serif" font-size="15"`
	svgHead                = `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">` + "\n"
	svgBg                  = `<rect width="100%" height="100%" fill="white"/>` + "\n"
	legendX, legendStartY  = chartW - padR + 16, padT + 8
)

// barChart draws records/s per system, grouped by groupOf(result).
func barChart(title string, groups []string, r *Report, groupOf func(Result) string) string {
	var systems []string
	maxV := 0.0
	for _, x := range r.Results {
		if !contains(systems, x.System) {
			systems = append(systems, x.System)
		}
		maxV = math.Max(maxV, x.RecordsPerSec)
	}
	top := niceCeil(maxV)
	var b strings.Builder
	fmt.Fprintf(&b, svgHead, chartW, chartH, chartW, chartH)
	b.WriteString(svgBg)
	fmt.Fprintf(&b, `<text x="%d" y="22" %s font-weight="bold">%s</text>`+"\n", padL, titleAttrs, html.EscapeString(title))
	for i := 0; i <= 5; i++ {
		v := top * float64(i) / 5
		y := padT + plotH - int(float64(plotH)*float64(i)/5)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ddd"/>`+"\n", padL, y, padL+plotW, y)
		fmt.Fprintf(&b, `<text x="%d" y="%d" %s text-anchor="end">%s</text>`+"\n", padL-6, y+4, fontAttrs, humanNum(v))
	}
	gw := float64(plotW) / float64(max(1, len(groups)))
	bw := gw * 0.8 / float64(max(1, len(systems)))
	for gi, g := range groups {
		gx := float64(padL) + gw*float64(gi) + gw*0.1
		for si, s := range systems {
			for _, x := range r.Results {
				if x.System != s || groupOf(x) != g {
					continue
				}
				h := 0.0
				if top > 0 {
					h = float64(plotH) * x.RecordsPerSec / top
				}
				bx := gx + bw*float64(si)
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %.0f records/s</title></rect>`+"\n",
					bx, float64(padT+plotH)-h, bw-2, h, colorOf(s), s, html.EscapeString(g), x.RecordsPerSec)
				if !x.Verified {
					fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" %s text-anchor="middle" fill="red">✗</text>`+"\n", bx+bw/2, float64(padT+plotH)-h-4, fontAttrs)
				}
			}
		}
		label := g
		if len(label) > 40 {
			label = label[:40]
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle">%s</text>`+"\n", gx+gw*0.4, padT+plotH+18, fontAttrs, html.EscapeString(label))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", padL, padT+plotH, padL+plotW, padT+plotH)
	legend(&b, systems)
	b.WriteString("</svg>\n")
	return b.String()
}

func legend(b *strings.Builder, systems []string) {
	for i, s := range systems {
		y := legendStartY + i*20
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", legendX, y, colorOf(s))
		fmt.Fprintf(b, `<text x="%d" y="%d" %s>%s</text>`+"\n", legendX+18, y+11, fontAttrs, html.EscapeString(s))
	}
}

// latencyChart draws each system's latency percentiles: x is the
// percentile on a log scale of 1/(1-p) (50, 90, 99, 99.9, 99.99), y the
// latency in ms on a log scale.
func latencyChart(title string, rs []Result) string {
	lo, hi := math.Inf(1), 0.0
	for _, x := range rs {
		for _, p := range x.Latency {
			if p.Ms > 0 {
				lo, hi = math.Min(lo, p.Ms), math.Max(hi, p.Ms)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	yLo := math.Pow(10, math.Floor(math.Log10(lo)))
	yHi := math.Pow(10, math.Ceil(math.Log10(hi)))
	if yHi <= yLo {
		yHi = yLo * 10
	}
	const xMax = 4.0 // log10(1/(1-0.9999))
	xOf := func(p float64) float64 {
		v := math.Log10(1 / math.Max(1e-4, 1-p/100))
		return float64(padL) + float64(plotW)*math.Min(v, xMax)/xMax
	}
	yOf := func(ms float64) float64 {
		ms = math.Max(ms, yLo)
		return float64(padT+plotH) - float64(plotH)*(math.Log10(ms)-math.Log10(yLo))/(math.Log10(yHi)-math.Log10(yLo))
	}
	var b strings.Builder
	fmt.Fprintf(&b, svgHead, chartW, chartH, chartW, chartH)
	b.WriteString(svgBg)
	fmt.Fprintf(&b, `<text x="%d" y="22" %s font-weight="bold">%s</text>`+"\n", padL, titleAttrs, html.EscapeString(title))
	for d := yLo; d <= yHi*1.0001; d *= 10 {
		y := yOf(d)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", padL, y, padL+plotW, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" %s text-anchor="end">%s ms</text>`+"\n", padL-6, y+4, fontAttrs, humanNum(d))
	}
	for _, p := range []float64{0, 50, 90, 99, 99.9, 99.99} {
		x := xOf(p)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>`+"\n", x, padT, x, padT+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle">p%s</text>`+"\n", x, padT+plotH+18, fontAttrs, trimFloat(p))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s text-anchor="middle">percentile</text>`+"\n", padL+plotW/2, padT+plotH+40, fontAttrs)
	var systems []string
	for _, x := range rs {
		systems = append(systems, x.System)
		var pts []string
		for _, p := range x.Latency {
			if p.P > 99.99 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xOf(p.P), yOf(p.Ms)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s</title></polyline>`+"\n", colorOf(x.System), strings.Join(pts, " "), x.System)
	}
	legend(&b, systems)
	b.WriteString("</svg>\n")
	return b.String()
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

func humanNum(v float64) string {
	switch {
	case v >= 1e6:
		return trimFloat(v/1e6) + "M"
	case v >= 1e3:
		return trimFloat(v/1e3) + "k"
	default:
		return trimFloat(v)
	}
}
