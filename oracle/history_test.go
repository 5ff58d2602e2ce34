package oracle

import "testing"

// TestHistoryAcked proves Acked counts exactly the writes a History says
// must appear in the source: acknowledged plain writes and acknowledged
// writes of committed transactions; not failed or unknown writes, nor
// writes of aborted or unknown transactions.
func TestHistoryAcked(t *testing.T) {
	h := &History{
		Writes: []Write{
			{ID: "plain-acked", Outcome: WriteAcked},
			{ID: "plain-failed", Outcome: WriteFailed},
			{ID: "plain-unknown", Outcome: WriteUnknown},
			{ID: "committed-1", Txn: "c", Outcome: WriteAcked},
			{ID: "committed-2", Txn: "c", Outcome: WriteAcked},
			{ID: "aborted", Txn: "a", Outcome: WriteAcked},
			{ID: "txn-unknown", Txn: "u", Outcome: WriteAcked},
		},
		Txns: []Txn{{ID: "c", Outcome: TxnCommitted}, {ID: "a", Outcome: TxnAborted}, {ID: "u", Outcome: TxnUnknown}},
	}
	if got := h.Acked(); got != 3 {
		t.Errorf("Acked() = %d, want 3 (plain-acked, committed-1, committed-2)", got)
	}
	for _, w := range h.Writes {
		want := w.ID == "plain-acked" || w.ID == "committed-1" || w.ID == "committed-2"
		if got := h.Presence(w.ID) == MustAppear; got != want {
			t.Errorf("%s: MustAppear %v, want %v", w.ID, got, want)
		}
	}
	if n := (*History)(nil).Acked(); n != 0 {
		t.Errorf("nil History: Acked() = %d", n)
	}
}
