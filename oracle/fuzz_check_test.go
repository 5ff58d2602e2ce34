package oracle

import (
	"fmt"
	"testing"
	"time"
)

// fuzzCase decodes fuzz bytes into a source log, a destination built from
// it by byte-driven operations (copy, skip, duplicate, phantom, corrupt,
// swap, move to another partition) and an interleaving; it stops when
// the bytes run out.
func fuzzCase(data []byte) (src, dst Log, order []byte) {
	next := func() (byte, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return b, true
	}
	src, dst = Log{}, Log{}
	n, _ := next()
	withIDs := n&0x80 == 0
	for i := range int(n % 40) {
		b, ok := next()
		if !ok {
			break
		}
		tp := TopicPartition{"t", int32(b % 3)}
		r := Record{Topic: tp.Topic, Partition: tp.Partition, Offset: int64(len(src[tp])), Timestamp: t0.Add(timeMs(i))}
		if b&4 != 0 {
			r.Key = []byte{b}
		}
		if b&8 != 0 {
			r.Value = []byte{}
		} else if b&16 != 0 {
			r.Value = []byte(fmt.Sprint(i))
		}
		if withIDs {
			r.Headers = []Header{{IDHeader, fmt.Appendf(nil, "w-%d", i)}}
		}
		src.Add(r)
	}
	for _, tp := range src.Partitions() {
		rs := src[tp]
		out := []Record{}
		for i := 0; i < len(rs); i++ {
			b, _ := next()
			r := rs[i]
			switch b % 10 {
			case 1: // skip
				continue
			case 2: // duplicate
				out = append(out, r)
			case 3: // phantom
				p := r
				p.Headers, p.Timestamp = []Header{{IDHeader, []byte("alien")}}, t0.Add(timeMs(1000+i))
				out = append(out, p)
			case 4: // corrupt
				r.Value = append(r.Value, 'x')
			case 5: // swap with the next
				if i+1 < len(rs) {
					out = append(out, rs[i+1])
					i++
				}
			case 6: // another partition
				r.Partition = (r.Partition + 1) % 4
				dst.Add(r)
				continue
			}
			out = append(out, r)
		}
		for _, r := range out {
			dst.Add(r)
		}
	}
	for tp, rs := range dst {
		for i := range rs {
			rs[i].Offset = int64(i)
		}
		dst[tp] = rs
	}
	return src, dst, data
}

func timeMs(i int) time.Duration { return time.Duration(i) * time.Millisecond }

// FuzzCheckAgree proves, on byte-driven histories and faults, that Check
// and Stream never panic and always agree, and that an exact copy passes.
func FuzzCheckAgree(f *testing.F) {
	f.Add([]byte{10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0, 2, 0, 5, 0, 6, 3, 1})
	f.Add([]byte{0x85, 9, 18, 27, 36, 45, 0, 1, 2, 3, 4, 5})
	f.Add([]byte{39})
	f.Fuzz(func(t *testing.T, data []byte) {
		src, dst, order := fuzzCase(data)
		whole := Check(src, dst, IdentityMapping(), nil)
		got := streamAll(t, src, dst, IdentityMapping(), nil, StreamOptions{}, func(n int) int {
			if len(order) == 0 {
				return 0
			}
			b := order[0]
			order = order[1:]
			return int(b) % n
		})
		if d := verdictDiff(whole, got); d != "" {
			t.Fatalf("stream disagrees with whole-history check:\n%s\nwhole:\n%s", d, whole)
		}
		if v := Check(src, src, IdentityMapping(), nil); !v.OK() {
			t.Fatalf("an exact copy must pass:\n%s", v)
		}
	})
}
