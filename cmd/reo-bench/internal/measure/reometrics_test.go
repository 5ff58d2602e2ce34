package measure

import (
	"math"
	"strings"
	"testing"

	"github.com/reo-kafka/reo/internal/promscrape"
)

// Two instances' pages: transactions and the commit steps sum over both,
// and the markers wait is per commit, over every commit (not only those
// that waited).
func TestReoStatsSumsInstances(t *testing.T) {
	page := func(text string) *promscrape.Page {
		p, err := promscrape.Parse(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	const one = `# TYPE reo_transactions_committed_total counter
reo_transactions_committed_total 10
# TYPE reo_records_replicated_total counter
reo_records_replicated_total{topic="a"} 300
# TYPE reo_commit_phase_seconds histogram
reo_commit_phase_seconds_bucket{phase="flush",le="+Inf"} 10
reo_commit_phase_seconds_sum{phase="flush"} 0.08
reo_commit_phase_seconds_count{phase="flush"} 10
reo_commit_phase_seconds_bucket{phase="end",le="+Inf"} 10
reo_commit_phase_seconds_sum{phase="end"} 0.02
reo_commit_phase_seconds_count{phase="end"} 10
reo_commit_phase_seconds_bucket{phase="markers",le="+Inf"} 5
reo_commit_phase_seconds_sum{phase="markers"} 0.03
reo_commit_phase_seconds_count{phase="markers"} 5
`
	const two = `# TYPE reo_transactions_committed_total counter
reo_transactions_committed_total 20
# TYPE reo_records_replicated_total counter
reo_records_replicated_total{topic="a"} 300
# TYPE reo_commit_phase_seconds histogram
reo_commit_phase_seconds_bucket{phase="flush",le="+Inf"} 20
reo_commit_phase_seconds_sum{phase="flush"} 0.16
reo_commit_phase_seconds_count{phase="flush"} 20
reo_commit_phase_seconds_bucket{phase="end",le="+Inf"} 20
reo_commit_phase_seconds_sum{phase="end"} 0.04
reo_commit_phase_seconds_count{phase="end"} 20
`
	st := reoStats([]*promscrape.Page{page(one), page(two)})
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if st.Transactions != 30 || !near(st.RecordsPerTxn, 20) {
		t.Errorf("transactions %v, records each %v; want 30 and 20", st.Transactions, st.RecordsPerTxn)
	}
	if !near(st.FlushMsAvg, 8) || !near(st.EndMsAvg, 2) {
		t.Errorf("flush %v ms, end %v ms; want 8 and 2", st.FlushMsAvg, st.EndMsAvg)
	}
	if !near(st.MarkersMsAvg, 1) {
		t.Errorf("markers wait %v ms per commit, want 30 ms over 30 commits = 1", st.MarkersMsAvg)
	}
	if s := st.Steps(); !strings.Contains(s, "then 1.0 waiting for the markers") {
		t.Errorf("steps %q do not name the markers wait", s)
	}
}
