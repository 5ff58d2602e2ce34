// Package promscrape reads a Prometheus text exposition (a /metrics
// page) with Prometheus's own parser, for the tests and harness tools
// that check what a process reports.
//
// A Page holds the samples as the text format writes them: a histogram
// "x" is the samples x_bucket (one per "le"), x_sum and x_count, a
// summary "y" is y (one per "quantile"), y_sum and y_count. So a name
// that appears on the page is the name to ask for.
package promscrape

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DefaultTimeout bounds a Fetch whose timeout is zero.
const DefaultTimeout = 5 * time.Second

// Sample is one line of an exposition: a sample name, its labels and its
// value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Page is a parsed exposition. The zero Page has no samples.
type Page struct {
	samples []Sample
	byName  map[string][]int // sample name -> indexes in samples, in page order
}

// Fetch GETs addr's /metrics page ("host:port"; a full URL is used as
// it is) within timeout (DefaultTimeout when zero, and never past ctx)
// and parses it. It fails on a transport error, a status other than
// 200, or a page the text parser rejects.
func Fetch(ctx context.Context, addr string, timeout time.Duration) (*Page, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := addr
	if !strings.Contains(addr, "://") {
		url = "http://" + addr + "/metrics"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("scrape %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	p, err := Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return p, nil
}

// Parse reads a Prometheus text exposition (format 0.0.4). Metric and
// label names are validated as UTF-8 (the parser of prometheus/common
// must be told a scheme; UTF-8 accepts every name the legacy scheme
// does).
func Parse(r io.Reader) (*Page, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	p := &Page{byName: map[string][]int{}}
	for _, n := range names {
		for _, m := range fams[n].GetMetric() {
			p.addMetric(n, fams[n].GetType(), m)
		}
	}
	return p, nil
}

func (p *Page) add(name string, labels map[string]string, v float64) {
	p.byName[name] = append(p.byName[name], len(p.samples))
	p.samples = append(p.samples, Sample{Name: name, Labels: labels, Value: v})
}

// addMetric adds the samples of one series of family name, as the text
// format writes them.
func (p *Page) addMetric(name string, typ dto.MetricType, m *dto.Metric) {
	labels := func(extra ...string) map[string]string {
		out := make(map[string]string, len(m.GetLabel())+len(extra)/2)
		for _, l := range m.GetLabel() {
			out[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(extra); i += 2 {
			out[extra[i]] = extra[i+1]
		}
		return out
	}
	switch typ {
	case dto.MetricType_COUNTER:
		p.add(name, labels(), m.GetCounter().GetValue())
	case dto.MetricType_GAUGE:
		p.add(name, labels(), m.GetGauge().GetValue())
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		inf := false
		for _, b := range h.GetBucket() {
			inf = inf || math.IsInf(b.GetUpperBound(), 1)
			p.add(name+"_bucket", labels("le", formatFloat(b.GetUpperBound())), float64(b.GetCumulativeCount()))
		}
		if !inf { // the +Inf bucket is implied by the count
			p.add(name+"_bucket", labels("le", "+Inf"), float64(h.GetSampleCount()))
		}
		p.add(name+"_sum", labels(), h.GetSampleSum())
		p.add(name+"_count", labels(), float64(h.GetSampleCount()))
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		for _, q := range s.GetQuantile() {
			p.add(name, labels("quantile", formatFloat(q.GetQuantile())), q.GetValue())
		}
		p.add(name+"_sum", labels(), s.GetSampleSum())
		p.add(name+"_count", labels(), float64(s.GetSampleCount()))
	default:
		p.add(name, labels(), m.GetUntyped().GetValue())
	}
}

// formatFloat writes a bucket bound or quantile as the text format does.
func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Series returns the samples named name whose labels include every pair
// of match (nil matches all), in page order.
func (p *Page) Series(name string, match map[string]string) []Sample {
	var out []Sample
	for _, i := range p.byName[name] {
		if matches(p.samples[i].Labels, match) {
			out = append(out, p.samples[i])
		}
	}
	return out
}

// Sum adds up the samples named name whose labels include every pair of
// match (nil matches all), and reports whether there was any.
func (p *Page) Sum(name string, match map[string]string) (float64, bool) {
	sum, found := 0.0, false
	for _, i := range p.byName[name] {
		if matches(p.samples[i].Labels, match) {
			sum, found = sum+p.samples[i].Value, true
		}
	}
	return sum, found
}

// Buckets returns histogram name's cumulative counts by upper bound
// (+Inf included), summed over the series whose labels include every
// pair of match; nil when the page has no such histogram.
func (p *Page) Buckets(name string, match map[string]string) map[float64]float64 {
	var out map[float64]float64
	for _, s := range p.Series(name+"_bucket", match) {
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[float64]float64{}
		}
		out[le] += s.Value
	}
	return out
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}
