package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
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
	// CommitP99Ms and ReplicationP99Ms are read from reo's histograms
	// (bucket upper bounds): the flush-and-commit time, and at commit the
	// age of the oldest record committed.
	CommitP99Ms      float64 `json:"commit_ms_p99"`
	ReplicationP99Ms float64 `json:"replication_ms_p99"`
	// Flush and end are the average times of a commit's steps: flush the
	// records and checkpoints (produced together), then EndTxn. Records
	// and checkpoints are the two flush steps of reo versions that wrote
	// the checkpoints after the records; older reports hold them.
	FlushMsAvg       float64 `json:"commit_flush_ms_avg,omitempty"`
	RecordsMsAvg     float64 `json:"commit_records_ms_avg,omitempty"`
	CheckpointsMsAvg float64 `json:"commit_checkpoints_ms_avg,omitempty"`
	EndMsAvg         float64 `json:"commit_end_ms_avg,omitempty"`
}

// steps describes a commit's average steps, or "" when reo did not
// report them.
func (s *ReoStats) steps() string {
	switch {
	case s.FlushMsAvg > 0:
		return fmt.Sprintf("flush %.1f, EndTxn %.1f", s.FlushMsAvg, s.EndMsAvg)
	case s.RecordsMsAvg > 0:
		return fmt.Sprintf("records %.1f, checkpoints %.1f, EndTxn %.1f", s.RecordsMsAvg, s.CheckpointsMsAvg, s.EndMsAvg)
	}
	return ""
}

// scrapeReo reads and sums reo's metrics from every address.
func scrapeReo(ctx context.Context, addrs []string) (*ReoStats, error) {
	sum := map[string]float64{}
	buckets := map[string]map[float64]float64{}
	for _, a := range addrs {
		m, bs, err := scrape(ctx, a)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			sum[k] += v
		}
		for k, b := range bs {
			if buckets[k] == nil {
				buckets[k] = map[float64]float64{}
			}
			for le, n := range b {
				buckets[k][le] += n
			}
		}
	}
	st := &ReoStats{
		Transactions: sum["reo_transactions_committed_total"],
		Aborted:      sum["reo_transactions_aborted_total"],
	}
	if n := sum["reo_commit_latency_seconds_count"]; n > 0 {
		st.CommitMsAvg = sum["reo_commit_latency_seconds_sum"] / n * 1000
	}
	phase := func(p string) float64 {
		if n := sum[`reo_commit_phase_seconds_count{phase="`+p+`"}`]; n > 0 {
			return sum[`reo_commit_phase_seconds_sum{phase="`+p+`"}`] / n * 1000
		}
		return 0
	}
	st.FlushMsAvg, st.EndMsAvg = phase("flush"), phase("end")
	st.RecordsMsAvg, st.CheckpointsMsAvg = phase("records"), phase("checkpoints")
	if st.Transactions > 0 {
		st.RecordsPerTxn = sum["reo_records_replicated_total"] / st.Transactions
	}
	st.CommitP99Ms = bucketQuantile(buckets["reo_commit_latency_seconds_bucket"], 0.99) * 1000
	st.ReplicationP99Ms = bucketQuantile(buckets["reo_replication_latency_seconds_bucket"], 0.99) * 1000
	return st, nil
}

// bucketQuantile returns the upper bound of the histogram bucket holding
// quantile q, from cumulative counts by upper bound.
func bucketQuantile(b map[float64]float64, q float64) float64 {
	if len(b) == 0 {
		return 0
	}
	les := make([]float64, 0, len(b))
	for le := range b {
		les = append(les, le)
	}
	sort.Float64s(les)
	total := b[les[len(les)-1]]
	for _, le := range les {
		if b[le] >= q*total {
			if math.IsInf(le, 1) && len(les) > 1 {
				return les[len(les)-2]
			}
			return le
		}
	}
	return les[len(les)-1]
}

// scrape returns every sample of a Prometheus text page, summed over
// labels, and histogram buckets by upper bound (summed over other labels).
func scrape(ctx context.Context, addr string) (map[string]float64, map[string]map[float64]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("scrape reo metrics: %w", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	buckets := map[string]map[float64]float64{}
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
		if err != nil {
			continue
		}
		out[name] += v
		if name != f[0] { // each labelled series too, by its full name
			out[f[0]] += v
		}
		if strings.HasSuffix(name, "_bucket") {
			if i := strings.Index(f[0], `le="`); i >= 0 {
				rest := f[0][i+4:]
				if j := strings.IndexByte(rest, '"'); j >= 0 {
					if le, err := strconv.ParseFloat(rest[:j], 64); err == nil {
						if buckets[name] == nil {
							buckets[name] = map[float64]float64{}
						}
						buckets[name][le] += v
					}
				}
			}
		}
	}
	return out, buckets, sc.Err()
}

// String is a short summary for progress lines; empty for nil.
func (s *ReoStats) String() string {
	if s == nil {
		return ""
	}
	steps := s.steps()
	if steps != "" {
		steps += "; "
	}
	return fmt.Sprintf(" [reo: %.0f transactions, %.0f records each, commit %.1f ms avg (%sp99 ≤ %.0f ms), replication p99 ≤ %.0f ms, %.0f aborted]",
		s.Transactions, s.RecordsPerTxn, s.CommitMsAvg, steps, s.CommitP99Ms, s.ReplicationP99Ms, s.Aborted)
}
