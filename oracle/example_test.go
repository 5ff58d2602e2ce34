package oracle_test

import (
	"fmt"
	"time"

	"github.com/reo-kafka/reo/oracle"
)

func record(topic string, offset int64, id, value string) oracle.Record {
	return oracle.Record{
		Topic: topic, Partition: 0, Offset: offset,
		Key: []byte("k"), Value: []byte(value),
		Headers:   []oracle.Header{{Key: oracle.IDHeader, Value: []byte(id)}},
		Timestamp: time.UnixMilli(1_700_000_000_000),
	}
}

// Check compares whole dumps: here the destination ("src." prefix, as
// MirrorMaker 2 names topics) lost w1-1 and holds an aborted record.
func ExampleCheck() {
	src := oracle.NewLog(record("orders", 0, "w1-0", "a"), record("orders", 1, "w1-1", "b"), record("orders", 2, "w1-2", "c"))
	dst := oracle.NewLog(record("src.orders", 0, "w1-0", "a"), record("src.orders", 1, "w1-2", "c"), record("src.orders", 2, "w1-9", "x"))
	h := &oracle.History{
		Writes: []oracle.Write{
			{ID: "w1-0", Topic: "orders", Partition: 0, Outcome: oracle.WriteAcked},
			{ID: "w1-1", Topic: "orders", Partition: 0, Outcome: oracle.WriteAcked},
			{ID: "w1-2", Topic: "orders", Partition: 0, Outcome: oracle.WriteUnknown},
			{ID: "w1-9", Topic: "orders", Partition: 0, Txn: "t7", Outcome: oracle.WriteAcked},
		},
		Txns: []oracle.Txn{{ID: "t7", Outcome: oracle.TxnAborted}},
	}
	v := oracle.Check(src, dst, oracle.PrefixMapping("src"), h)
	fmt.Println(v.OK(), v.Counts)
	for _, x := range v.Violations {
		fmt.Println(x)
	}
	// Output:
	// false map[aborted-visible:1 lost:1]
	// aborted-visible orders[0]@- -> src.orders[0]@2 id=w1-9: belongs to a failed write or an aborted transaction
	// lost orders[0]@1 -> src.orders[0]@- id=w1-1: committed in the source, absent from the destination
}

// A Stream takes records as two consumers read them, in any interleaving.
func ExampleStream() {
	s, err := oracle.NewStream(oracle.IdentityMapping(), nil, oracle.StreamOptions{Window: 1024})
	if err != nil {
		panic(err)
	}
	a, b, c := record("orders", 0, "w1-0", "a"), record("orders", 1, "w1-1", "b"), record("orders", 2, "w1-2", "c")
	s.AddSource(&a)
	s.AddSource(&b)
	s.AddDest(&a)
	s.AddSource(&c)
	c2, b2 := c, b
	c2.Offset, b2.Offset = 1, 2
	s.AddDest(&c2) // b and c arrive swapped
	s.AddDest(&b2)
	v := s.Close()
	fmt.Println(v.Counts)
	fmt.Println(v.Violations[0])
	// Output:
	// map[reordered:1]
	// reordered orders[0]@1 -> orders[0]@2 id=w1-1: out of source order in the destination partition
}
