package replicator

import (
	"strings"
	"testing"
)

// TestCheckpointRoundTrip proves that encoded checkpoints decode to the same
// values, that keys are byte-stable (compaction relies on it), and that bad
// records are refused with a reason.
func TestCheckpointRoundTrip(t *testing.T) {
	k := CheckpointKey{Cluster: "c1", Topic: "orders", Partition: 3}
	c := Checkpoint{Next: 100, SrcFirst: 90, SrcLast: 99, DstTopic: "orders", DstFirst: 7, DstLast: 16, SrcTopicID: "a", DstTopicID: "b", SrcEpoch: 3}
	kb, vb := encodeCheckpointKey(k), encodeCheckpoint(c)
	if want := `{"v":1,"cluster":"c1","topic":"orders","partition":3}`; string(kb) != want {
		t.Errorf("key encodes as %s, want %s (key bytes must never change)", kb, want)
	}
	gk, gc, err := DecodeCheckpoint(kb, vb)
	k.Version, c.Version = 1, 2
	if err != nil || gk != k || gc != c {
		t.Fatalf("decode(encode(%+v, %+v)) = %+v, %+v, %v", k, c, gk, gc, err)
	}
	for _, bad := range []struct{ key, value, why string }{
		{`{"v":2,"cluster":"","topic":"t","partition":0}`, `{"v":1,"next":1,"srcFirst":0,"srcLast":0,"dstTopic":"t","dstFirst":0,"dstLast":0}`, "version"},
		{string(kb), `{"v":1,"next":1,"srcFirst":0,"srcLast":5,"dstTopic":"t","dstFirst":0,"dstLast":0}`, "inconsistent"},
		{string(kb), `{"v":1,"next":1,"extra":2}`, "unknown field"},
		{string(kb), "", "value"},
		{"\x00garbage", "{}", "key"},
		{string(kb), `{"v":3,"next":1,"srcFirst":0,"srcLast":0,"dstTopic":"t","dstFirst":0,"dstLast":0}`, "newer reo"},
		{string(kb), `{"v":1,"next":1,"srcFirst":0,"srcLast":0,"dstTopic":"t","dstFirst":0,"dstLast":0,"srcTopicId":"x"}`, "version 1 with version 2 fields"},
	} {
		var value []byte
		if bad.value != "" {
			value = []byte(bad.value)
		}
		if _, _, err := DecodeCheckpoint([]byte(bad.key), value); err == nil || !strings.Contains(err.Error(), bad.why) {
			t.Errorf("DecodeCheckpoint(%q, %q) error = %v, want one mentioning %q", bad.key, bad.value, err, bad.why)
		}
	}
}

// FuzzDecodeCheckpoint proves the decoder never panics on arbitrary bytes and
// that whatever it accepts re-encodes to something it decodes identically.
func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add(encodeCheckpointKey(CheckpointKey{Cluster: "c", Topic: "t", Partition: 1}),
		encodeCheckpoint(Checkpoint{Next: 5, SrcFirst: 1, SrcLast: 4, DstTopic: "t", DstFirst: 0, DstLast: 3}))
	f.Add([]byte(`{"v":1}`), []byte(`{"v":1,"next":-1}`))
	f.Add([]byte{}, []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		k, c, err := DecodeCheckpoint(key, value)
		if err != nil {
			return
		}
		k2, c2, err := DecodeCheckpoint(encodeCheckpointKey(k), encodeCheckpoint(c))
		c.Version = checkpointValueVersion // every value is written in the current version
		if err != nil || k2 != k || c2 != c {
			t.Fatalf("accepted %q/%q as %+v/%+v but its re-encoding decodes to %+v/%+v, %v", key, value, k, c, k2, c2, err)
		}
	})
}
