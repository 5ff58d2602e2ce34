package promscrape_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/reo-kafka/reo/internal/promscrape"
)

// registry returns a registry whose page holds labelled counters, a
// gauge, a labelled histogram, a summary and a metric whose name is a
// prefix of another's, with known values.
func registry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	restarts := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "reo_shard_restarts_total", Help: "h"}, []string{"shard", "reason"})
	restarts.WithLabelValues("0", "fenced").Add(2)
	restarts.WithLabelValues("1", "fenced").Add(3)
	restarts.WithLabelValues("1", "error").Add(5)
	owned := prometheus.NewGauge(prometheus.GaugeOpts{Name: "reo_shards_owned", Help: "h"})
	owned.Set(4)
	ownedMax := prometheus.NewGauge(prometheus.GaugeOpts{Name: "reo_shards_owned_max", Help: "h"})
	ownedMax.Set(100)
	phase := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "reo_commit_phase_seconds", Help: "h", Buckets: []float64{0.01, 0.1, 1}}, []string{"phase"})
	for _, v := range []float64{0.005, 0.05, 0.05, 0.5, 5} {
		phase.WithLabelValues("flush").Observe(v)
	}
	phase.WithLabelValues("end").Observe(0.02)
	sum := prometheus.NewSummary(prometheus.SummaryOpts{Name: "reo_batch_records", Help: "h", Objectives: map[float64]float64{0.5: 0.01}})
	for _, v := range []float64{1, 2, 3} {
		sum.Observe(v)
	}
	reg.MustRegister(restarts, owned, ownedMax, phase, sum)
	return reg
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestFetchReadsRegistryPage proves a page served by a real Prometheus
// registry reads back with the values it was given: sums over labels,
// label filters, a name that prefixes another, histogram buckets, sum and
// count, and summary samples.
func TestFetchReadsRegistryPage(t *testing.T) {
	addr := serve(t, promhttp.HandlerFor(registry(t), promhttp.HandlerOpts{}))
	p, err := promscrape.Fetch(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"reo_shard_restarts_total", nil, 10},
		{"reo_shard_restarts_total", map[string]string{"reason": "fenced"}, 5},
		{"reo_shard_restarts_total", map[string]string{"reason": "fenced", "shard": "1"}, 3},
		{"reo_shards_owned", nil, 4}, // not reo_shards_owned_max
		{"reo_commit_phase_seconds_count", nil, 6},
		{"reo_commit_phase_seconds_count", map[string]string{"phase": "flush"}, 5},
		{"reo_commit_phase_seconds_sum", map[string]string{"phase": "end"}, 0.02},
		{"reo_commit_phase_seconds_bucket", map[string]string{"phase": "flush", "le": "0.1"}, 3},
		{"reo_commit_phase_seconds_bucket", map[string]string{"phase": "flush", "le": "+Inf"}, 5},
		{"reo_batch_records_count", nil, 3},
		{"reo_batch_records_sum", nil, 6},
		{"reo_batch_records", map[string]string{"quantile": "0.5"}, 2},
	} {
		got, ok := p.Sum(tc.name, tc.match)
		if !ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Sum(%s, %v) = %v, %v; want %v", tc.name, tc.match, got, ok, tc.want)
		}
	}
	if _, ok := p.Sum("reo_shard_restarts_total", map[string]string{"reason": "other"}); ok {
		t.Error("Sum found a series for a label value no series has")
	}
	if _, ok := p.Sum("reo_commit_phase_seconds", nil); ok {
		t.Error("Sum found a histogram under its family name; the page has only _bucket, _sum and _count samples")
	}
	if s := p.Series("reo_shard_restarts_total", map[string]string{"shard": "1"}); len(s) != 2 {
		t.Errorf("Series(shard=1) = %v, want 2 series", s)
	}
	b := p.Buckets("reo_commit_phase_seconds", nil)
	want := map[float64]float64{0.01: 1, 0.1: 4, 1: 5, math.Inf(1): 6}
	if len(b) != len(want) {
		t.Fatalf("Buckets = %v, want %v", b, want)
	}
	for le, n := range want {
		if b[le] != n {
			t.Errorf("Buckets[%v] = %v, want %v (all: %v)", le, b[le], n, b)
		}
	}
}

// TestFetchFails proves Fetch reports a non-200 answer, a page the parser
// rejects, nothing listening, and a server slower than the timeout.
func TestFetchFails(t *testing.T) {
	down := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	}))
	garbage := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("reo_x{unterminated 1\n"))
	}))
	release := make(chan struct{})
	slow := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	// Only the slow server is meant to meet the timeout: the others
	// get one a loaded machine cannot reach before their answer.
	for _, tc := range []struct {
		what, addr, want string
		timeout          time.Duration
	}{
		{"503", down, "503", time.Minute},
		{"unparsable page", garbage, "parse metrics", time.Minute},
		{"nothing listening", closedAddr, "scrape", time.Minute},
		{"slow server", slow, "deadline", 300 * time.Millisecond},
	} {
		start := time.Now()
		_, err := promscrape.Fetch(context.Background(), tc.addr, tc.timeout)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Fetch error %v, want one mentioning %q", tc.what, err, tc.want)
		}
		if took := time.Since(start); took > 10*tc.timeout {
			t.Errorf("%s: Fetch took %v with a %v timeout", tc.what, took, tc.timeout)
		}
	}
}

// TestParseText proves Parse reads a hand-written page (untyped samples,
// escaped label values) the way the text format defines it.
func TestParseText(t *testing.T) {
	p, err := promscrape.Parse(strings.NewReader("# HELP reo_build_info b\n# TYPE reo_build_info gauge\n" +
		"reo_build_info{version=\"v1 \\\"x\\\"\",goversion=\"go1\"} 1\nplain 2.5\nplain{a=\"b\"} 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Series("reo_build_info", nil); len(s) != 1 || s[0].Labels["version"] != `v1 "x"` || s[0].Value != 1 {
		t.Errorf("reo_build_info = %+v", s)
	}
	if v, ok := p.Sum("plain", nil); !ok || v != 3 {
		t.Errorf("Sum(plain) = %v, %v; want 3", v, ok)
	}
}
