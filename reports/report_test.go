package reports_test

import (
	"flag"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/reports"
)

var update = flag.Bool("update", false, "rewrite testdata/sample-duplicate.json")

func rec(p int32, off int64, id string) oracle.Record {
	return oracle.Record{Topic: "t", Partition: p, Offset: off, Key: []byte("k" + id), Value: []byte("v" + id),
		Headers: []oracle.Header{{Key: oracle.IDHeader, Value: []byte(id)}}, Timestamp: time.UnixMilli(1_700_000_000_000 + off)}
}

// sample is a small run in which the destination holds one record twice.
func sample() *reports.Report {
	src := oracle.NewLog(rec(0, 0, "a"), rec(0, 1, "b"), rec(1, 0, "c"))
	dst := oracle.NewLog(rec(0, 0, "a"), rec(0, 1, "b"), rec(0, 2, "b"), rec(1, 0, "c"))
	r := &reports.Report{Name: "sample-duplicate", Seed: 7, Replay: "go test ./reports -run TestSavedReportsRevalidate",
		Provider: "none", Started: time.Unix(1_700_000_000, 0).UTC(),
		Timeline: []reports.Event{{At: time.Second, Kind: "kill", Target: "reo-0"}, {At: 2 * time.Second, Kind: "start", Target: "reo-1"}},
		Source:   src, Dest: dst}
	r.Verdict = r.Revalidate()
	return r
}

// TestWriteReadRoundTrip proves a report survives Write and Read whole:
// re-validating the read copy gives the verdict that was saved.
func TestWriteReadRoundTrip(t *testing.T) {
	r := sample()
	if r.Verdict.OK() || r.Verdict.Counts[oracle.KindDuplicated] != 1 {
		t.Fatalf("sample verdict should name one duplicate, got %v", r.Verdict.Counts)
	}
	path, err := r.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	back, err := reports.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Seed != r.Seed || back.Replay != r.Replay || len(back.Timeline) != 2 || back.Source.Len() != 3 || back.Dest.Len() != 4 {
		t.Fatalf("read back a different report: %+v", back)
	}
	if got := back.Revalidate().Counts; !maps.Equal(got, r.Verdict.Counts) {
		t.Fatalf("re-validated counts %v, saved %v", got, r.Verdict.Counts)
	}
}

// TestSavedReportsRevalidate proves every report saved under testdata/
// still gets the verdict it was saved with: a change to the oracle that
// alters old judgements fails here.
func TestSavedReportsRevalidate(t *testing.T) {
	if *update {
		if _, err := sample().Write("testdata"); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no saved reports under testdata/")
	}
	for _, p := range paths {
		r, err := reports.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Revalidate(); !maps.Equal(got.Counts, r.Verdict.Counts) || got.OK() != r.Verdict.OK() {
			t.Errorf("%s: re-validated counts %v, saved %v", p, got.Counts, r.Verdict.Counts)
		}
	}
}

// TestTimelineSVG proves the timeline picture shows what happened: the
// verdict in its title, a band per healed fault named after it, a mark per
// kill, and a lag line drawn from the samples.
func TestTimelineSVG(t *testing.T) {
	r := sample()
	r.Timeline = []reports.Event{
		{At: 0, Kind: "sample", Lag: 0, Commits: 0},
		{At: time.Second, Kind: "inject", Target: "blackhole(source)"},
		{At: 1500 * time.Millisecond, Kind: "sample", Lag: 40, Commits: 3},
		{At: 2 * time.Second, Kind: "heal", Target: "blackhole(source)"},
		{At: 3 * time.Second, Kind: "kill", Target: "reo-0"},
		{At: 4 * time.Second, Kind: "sample", Lag: 5, Commits: 9},
	}
	var b strings.Builder
	if err := r.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, want := range []string{"<svg", "duplicated=1", "blackhole(source)", "kill reo-0", "<polyline", "lag 40"} {
		if !strings.Contains(svg, want) {
			t.Errorf("timeline SVG lacks %q", want)
		}
	}
}

// TestSlim proves a slim report keeps what replays and explains a run
// (scenario, timeline, counts, the first violations, log tails) and drops
// the bulk.
func TestSlim(t *testing.T) {
	var viol []oracle.Violation
	for i := range 30 {
		viol = append(viol, oracle.Violation{Kind: oracle.KindDuplicated, Topic: "t", SourceOffset: int64(i)})
	}
	long := strings.Repeat("line\n", 100)
	r := &reports.Report{Name: "x", Scenario: []byte(`{"name":"x"}`), Logs: map[string]string{"a": long},
		Source: oracle.NewLog(oracle.Record{Topic: "t"}), Dest: oracle.NewLog(oracle.Record{Topic: "t"}),
		History: &oracle.History{}, Timeline: []reports.Event{{Kind: "kill"}},
		Verdict: oracle.Verdict{Counts: map[oracle.Kind]int{oracle.KindDuplicated: 30}, Violations: viol, Dropped: 2}}
	s := r.Slim(20)
	if s.History != nil || s.Source != nil || s.Dest != nil {
		t.Error("slim report keeps dumps or history")
	}
	if len(s.Verdict.Violations) != 20 || s.Verdict.Dropped != 12 || s.Verdict.Counts[oracle.KindDuplicated] != 30 {
		t.Errorf("violations %d dropped %d counts %v; want 20, 12, 30", len(s.Verdict.Violations), s.Verdict.Dropped, s.Verdict.Counts)
	}
	if n := strings.Count(s.Logs["a"], "\nline"); n != 40 || !strings.Contains(s.Logs["a"], "[60 lines before these]") {
		t.Errorf("log tail has %d lines: %q", n, s.Logs["a"][:60])
	}
	if string(s.Scenario) != `{"name":"x"}` || len(s.Timeline) != 1 {
		t.Error("slim report lost its scenario or timeline")
	}
	if len(r.Verdict.Violations) != 30 || r.History == nil || r.Logs["a"] != long {
		t.Error("Slim changed the report it was called on")
	}
}
