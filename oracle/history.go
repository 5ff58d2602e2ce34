package oracle

// WriteOutcome is what a producer learned about one record it sent.
type WriteOutcome string

// The outcomes of a write. WriteFailed means the client knows the record
// was not written; any ambiguous error (a timeout, a lost connection after
// sending) must be recorded as WriteUnknown, because such a write may
// still have been applied. An empty outcome counts as unknown.
const (
	WriteAcked   WriteOutcome = "acked"
	WriteFailed  WriteOutcome = "failed"
	WriteUnknown WriteOutcome = "unknown"
)

// TxnOutcome is what a producer learned about one transaction.
type TxnOutcome string

// The outcomes of a transaction. TxnUnknown covers an EndTxn whose answer
// never arrived; an empty outcome counts as unknown.
const (
	TxnCommitted TxnOutcome = "committed"
	TxnAborted   TxnOutcome = "aborted"
	TxnUnknown   TxnOutcome = "unknown"
)

// Write is one record a workload producer attempted. ID is the value of
// the record's IDHeader and must be unique in the History. Txn names the
// transaction the record was produced in ("" when not transactional); it
// is the workload's unique name of that one transaction, not the reusable
// Kafka transactional.id. Partition is -1 when the producer did not pick
// it.
type Write struct {
	ID        string       `json:"id"`
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Txn       string       `json:"txn,omitempty"`
	Outcome   WriteOutcome `json:"outcome"`
}

// Txn is one transaction a workload producer opened and the outcome it
// learned.
type Txn struct {
	ID      string     `json:"id"`
	Outcome TxnOutcome `json:"outcome"`
}

// History is what the workload attempted against the source cluster. A
// nil *History means none is known: the oracle then compares source and
// destination only, and reports aborted records leaked into the
// destination as phantom.
type History struct {
	Writes []Write `json:"writes"`
	Txns   []Txn   `json:"txns,omitempty"`
}

// Presence is what a History implies about one record in a
// read_committed dump of the source.
type Presence uint8

// The presences of a record. MayAppear covers unknown outcomes: such a
// record is neither required nor forbidden, as in etcd's robustness
// tests.
const (
	Unlisted      Presence = iota // the History does not know the record
	MayAppear                     // outcome unknown
	MustAppear                    // acked, and its transaction (if any) committed
	MustNotAppear                 // failed, or its transaction aborted
)

// Presence returns what h implies about the record with identity id. A
// nil h knows no record.
func (h *History) Presence(id string) Presence {
	if h == nil {
		return Unlisted
	}
	txns := make(map[string]TxnOutcome, len(h.Txns))
	for _, t := range h.Txns {
		txns[t.ID] = t.Outcome
	}
	for _, w := range h.Writes {
		if w.ID == id {
			return presenceOf(w, txns)
		}
	}
	return Unlisted
}

// Acked returns how many writes of h must appear in a read_committed dump
// of the source (MustAppear): acknowledged, and in a committed transaction
// when in one. A nil h has none.
func (h *History) Acked() int {
	if h == nil {
		return 0
	}
	txns := make(map[string]TxnOutcome, len(h.Txns))
	for _, t := range h.Txns {
		txns[t.ID] = t.Outcome
	}
	n := 0
	for _, w := range h.Writes {
		if presenceOf(w, txns) == MustAppear {
			n++
		}
	}
	return n
}

func presenceOf(w Write, txns map[string]TxnOutcome) Presence {
	txn := TxnCommitted
	if w.Txn != "" {
		txn = txns[w.Txn]
	}
	switch {
	case w.Outcome == WriteFailed || txn == TxnAborted:
		return MustNotAppear
	case w.Outcome == WriteAcked && txn == TxnCommitted:
		return MustAppear
	default:
		return MayAppear
	}
}

// histIndex is a History indexed by identity hash, with a flag per write
// saying whether the source dump held it.
type histIndex struct {
	byID     map[uint64]int32
	writes   []Write
	presence []Presence
	seen     []bool
}

func newHistIndex(h *History) *histIndex {
	if h == nil {
		return nil
	}
	txns := make(map[string]TxnOutcome, len(h.Txns))
	for _, t := range h.Txns {
		txns[t.ID] = t.Outcome
	}
	x := &histIndex{
		byID:     make(map[uint64]int32, len(h.Writes)),
		writes:   h.Writes,
		presence: make([]Presence, len(h.Writes)),
		seen:     make([]bool, len(h.Writes)),
	}
	for i, w := range h.Writes {
		x.byID[idHashString(w.ID)] = int32(i)
		x.presence[i] = presenceOf(w, txns)
	}
	return x
}

// lookup returns the index of the write with identity hash id, or -1.
func (x *histIndex) lookup(id uint64) int {
	if x == nil {
		return -1
	}
	if i, ok := x.byID[id]; ok {
		return int(i)
	}
	return -1
}

// forbidden reports whether a record with fingerprint f belongs to a
// failed write or an aborted transaction.
func (x *histIndex) forbidden(f *fingerprint) bool {
	if x == nil || f.flags&flagHasID == 0 {
		return false
	}
	i := x.lookup(f.id)
	return i >= 0 && x.presence[i] == MustNotAppear
}
