package oracle

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// sampleVerdict returns a verdict with one violation of several kinds,
// partition reports and context lines.
func sampleVerdict() Verdict {
	src := simpleSource(8)
	dst := copyTo(src, IdentityMapping())
	rs := dst[tp0]
	rs[5].Value = nil
	rs[6].Headers = append(rs[6].Headers, Header{Key: "x", Value: []byte{}})
	dst[tp0] = append(rs[:2:2], rs[3:]...)
	dst.Add(rec("orders", 0, 50, "alien", "k", "v"))
	return Check(src, dst, IdentityMapping(), nil)
}

// TestVerdictJSONRoundTrip proves a verdict reads back from its JSON
// unchanged, and that the encoding names kinds and fields in words.
func TestVerdictJSONRoundTrip(t *testing.T) {
	v := sampleVerdict()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	back, err := DecodeVerdict(data)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(v, back) {
		t.Fatalf("round trip changed the verdict:\nbefore %+v\nafter  %+v", v, back)
	}
	for _, want := range []string{`"kind":"lost"`, `"kind":"corrupted"`, `"fields":["value","value-nil"]`, `"source_offset":2`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("JSON lacks %s:\n%s", want, data)
		}
	}
}

// TestDecodeVerdictRejects proves DecodeVerdict refuses what this package
// could not have written.
func TestDecodeVerdictRejects(t *testing.T) {
	for _, bad := range []string{
		`{"counts":{"vanished":1}}`,
		`{"counts":{"lost":-1}}`,
		`{"violations":[{"kind":"teleported"}]}`,
		`{"checked":-3}`,
		`[1,2]`,
	} {
		if _, err := DecodeVerdict([]byte(bad)); err == nil {
			t.Errorf("DecodeVerdict(%s) should fail", bad)
		}
	}
}

// TestLogJSONKeepsNil proves a Log's JSON keeps nil apart from empty for
// keys, values and header values, and keeps header order.
func TestLogJSONKeepsNil(t *testing.T) {
	l := NewLog(
		Record{Topic: "t", Key: nil, Value: []byte{}, Headers: []Header{{"b", nil}, {"a", []byte{}}}, Timestamp: t0},
		Record{Topic: "t", Offset: 1, Key: []byte{}, Value: nil, Timestamp: t0},
	)
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back Log
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	a, b := l[TopicPartition{"t", 0}], back[TopicPartition{"t", 0}]
	if len(b) != 2 || b[0].Key != nil || b[0].Value == nil || b[1].Key == nil || b[1].Value != nil ||
		b[0].Headers[0].Value != nil || b[0].Headers[1].Value == nil || b[0].Headers[0].Key != "b" {
		t.Fatalf("nil-ness or header order lost:\n%s\nbefore %+v\nafter  %+v", data, a, b)
	}
	if v := Check(l, back, IdentityMapping(), nil); !v.OK() {
		t.Fatalf("a log and its JSON copy must compare equal:\n%s", v)
	}
}

// FuzzVerdictJSON proves DecodeVerdict never panics, and that whatever it
// accepts re-encodes to JSON that decodes to the same verdict.
func FuzzVerdictJSON(f *testing.F) {
	data, _ := json.Marshal(sampleVerdict())
	f.Add(data)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"mode":"stream","counts":{"lag-exceeded":1},"unchecked":5}`))
	f.Add([]byte(`{"violations":[{"kind":"phantom","fields":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeVerdict(data)
		if err != nil {
			return
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("marshal a decoded verdict: %v", err)
		}
		w, err := DecodeVerdict(again)
		if err != nil {
			t.Fatalf("decode our own encoding: %v\n%s", err, again)
		}
		third, _ := json.Marshal(w)
		if !bytes.Equal(again, third) {
			t.Fatalf("encoding is not stable:\n%s\n%s", again, third)
		}
		_ = v.String() // must not panic either
	})
}

// FuzzLogJSON proves Log decoding never panics and that a decoded log
// re-encodes stably.
func FuzzLogJSON(f *testing.F) {
	data, _ := json.Marshal(simpleSource(3))
	f.Add(data)
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"topic":"t","partition":2,"offset":7,"key":null,"value":"","headers":[{"key":"reo-test-id","value":"dzE="}],"timestamp":"2024-01-01T00:00:00Z"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l Log
		if err := json.Unmarshal(data, &l); err != nil {
			return
		}
		again, err := json.Marshal(l)
		if err != nil {
			return // e.g. a timestamp outside what JSON time can hold
		}
		var m Log
		if err := json.Unmarshal(again, &m); err != nil {
			t.Fatalf("decode our own encoding: %v\n%s", err, again)
		}
		third, _ := json.Marshal(m)
		if !bytes.Equal(again, third) {
			t.Fatalf("encoding is not stable:\n%s\n%s", again, third)
		}
	})
}
