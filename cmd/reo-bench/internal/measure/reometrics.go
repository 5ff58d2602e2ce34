package measure

import (
	"context"
	"math"
	"sort"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/internal/promscrape"
)

// ScrapeReo reads reo's /metrics at every address and sums them over the
// instances: transactions, commit time and its steps, records per
// transaction, and the p99 of the commit and replication histograms. It
// fails on the first address that cannot be read.
func ScrapeReo(ctx context.Context, addrs []string) (*report.ReoStats, error) {
	pages := make([]*promscrape.Page, 0, len(addrs))
	for _, a := range addrs {
		p, err := promscrape.Fetch(ctx, a, 0)
		if err != nil {
			return nil, err
		}
		pages = append(pages, p)
	}
	return reoStats(pages), nil
}

// reoStats sums reo's metrics over pages.
func reoStats(pages []*promscrape.Page) *report.ReoStats {
	sum := func(name string, match map[string]string) float64 {
		t := 0.0
		for _, p := range pages {
			v, _ := p.Sum(name, match)
			t += v
		}
		return t
	}
	buckets := func(name string) map[float64]float64 {
		out := map[float64]float64{}
		for _, p := range pages {
			for le, n := range p.Buckets(name, nil) {
				out[le] += n
			}
		}
		return out
	}
	avgMs := func(name string, match map[string]string) float64 {
		if n := sum(name+"_count", match); n > 0 {
			return sum(name+"_sum", match) / n * 1000
		}
		return 0
	}
	phase := func(p string) float64 { return avgMs("reo_commit_phase_seconds", map[string]string{"phase": p}) }
	st := &report.ReoStats{
		Transactions: sum("reo_transactions_committed_total", nil),
		Aborted:      sum("reo_transactions_aborted_total", nil),
		CommitMsAvg:  avgMs("reo_commit_latency_seconds", nil),
	}
	st.FlushMsAvg, st.EndMsAvg = phase("flush"), phase("end")
	st.RecordsMsAvg, st.CheckpointsMsAvg = phase("records"), phase("checkpoints")
	if st.Transactions > 0 {
		st.MarkersMsAvg = sum("reo_commit_phase_seconds_sum", map[string]string{"phase": "markers"}) / st.Transactions * 1000
		st.RecordsPerTxn = sum("reo_records_replicated_total", nil) / st.Transactions
	}
	st.CommitP99Ms = bucketQuantile(buckets("reo_commit_latency_seconds"), 0.99) * 1000
	st.ReplicationP99Ms = bucketQuantile(buckets("reo_replication_latency_seconds"), 0.99) * 1000
	return st
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
