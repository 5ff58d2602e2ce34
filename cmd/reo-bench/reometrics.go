package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ReoStats is what reo's own /metrics said at the end of a phase, summed
// over its instances: how many transactions it committed, how long a
// commit took on average, and how many records each transaction held.
// It explains reo's figures (transaction size and commit cost).
type ReoStats struct {
	Transactions  float64 `json:"transactions"`
	Aborted       float64 `json:"aborted"`
	CommitMsAvg   float64 `json:"commit_ms_avg"`
	RecordsPerTxn float64 `json:"records_per_txn"`
}

// scrapeReo reads and sums reo's metrics from every address.
func scrapeReo(ctx context.Context, addrs []string) (*ReoStats, error) {
	sum := map[string]float64{}
	for _, a := range addrs {
		m, err := scrape(ctx, a)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			sum[k] += v
		}
	}
	st := &ReoStats{
		Transactions: sum["reo_transactions_committed_total"],
		Aborted:      sum["reo_transactions_aborted_total"],
	}
	if n := sum["reo_commit_latency_seconds_count"]; n > 0 {
		st.CommitMsAvg = sum["reo_commit_latency_seconds_sum"] / n * 1000
	}
	if st.Transactions > 0 {
		st.RecordsPerTxn = sum["reo_records_replicated_total"] / st.Transactions
	}
	return st, nil
}

// scrape returns every sample of a Prometheus text page, summed over labels.
func scrape(ctx context.Context, addr string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape reo metrics: %w", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		f := strings.Fields(line)
		name := f[0]
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			out[name] += v
		}
	}
	return out, sc.Err()
}

// String is a short summary for progress lines; empty for nil.
func (s *ReoStats) String() string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf(" [reo: %.0f transactions, %.0f records each, commit %.1f ms avg, %.0f aborted]", s.Transactions, s.RecordsPerTxn, s.CommitMsAvg, s.Aborted)
}
