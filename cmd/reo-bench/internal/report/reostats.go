package report

import "fmt"

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
	// MarkersMsAvg is, per commit, the average wait after EndTxn until
	// the coordinator reported the commit markers written (reo waits
	// before producing the next transaction's records when the
	// destination is near; 0 for versions that did not).
	MarkersMsAvg float64 `json:"commit_markers_ms_avg,omitempty"`
}

// CycleMsAvg is a commit's average time including the wait for its
// markers: how long a shard is busy committing before its next records
// go out.
func (s *ReoStats) CycleMsAvg() float64 { return s.CommitMsAvg + s.MarkersMsAvg }

// Steps describes a commit's average steps, or "" when reo did not
// report them.
func (s *ReoStats) Steps() string {
	switch {
	case s.FlushMsAvg > 0 && s.MarkersMsAvg > 0:
		return fmt.Sprintf("flush %.1f, EndTxn %.1f, then %.1f waiting for the markers", s.FlushMsAvg, s.EndMsAvg, s.MarkersMsAvg)
	case s.FlushMsAvg > 0:
		return fmt.Sprintf("flush %.1f, EndTxn %.1f", s.FlushMsAvg, s.EndMsAvg)
	case s.RecordsMsAvg > 0:
		return fmt.Sprintf("records %.1f, checkpoints %.1f, EndTxn %.1f", s.RecordsMsAvg, s.CheckpointsMsAvg, s.EndMsAvg)
	}
	return ""
}

// String is a short summary for progress lines; empty for nil.
func (s *ReoStats) String() string {
	if s == nil {
		return ""
	}
	steps := s.Steps()
	if steps != "" {
		steps += "; "
	}
	return fmt.Sprintf(" [reo: %.0f transactions, %.0f records each, commit %.1f ms avg (%sp99 ≤ %.0f ms), replication p99 ≤ %.0f ms, %.0f aborted]",
		s.Transactions, s.RecordsPerTxn, s.CommitMsAvg, steps, s.CommitP99Ms, s.ReplicationP99Ms, s.Aborted)
}
