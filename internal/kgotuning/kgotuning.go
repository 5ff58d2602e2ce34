// Package kgotuning is the client settings one turns to make a franz-go
// consume→produce loop fast (batching and linger, what may be buffered
// and in flight, how much a fetch brings), in one place for the programs
// that take them as flags (the harness's pipe) and the tools that pass
// them to their own clients (reo-bench's ceilings).
package kgotuning

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Settings are franz-go client settings; a zero field leaves franz-go's
// default.
type Settings struct {
	// Linger is kgo.ProducerLinger; NoLinger sets it to 0 (produce at once).
	Linger   time.Duration
	NoLinger bool
	// BatchMaxBytes is kgo.ProducerBatchMaxBytes.
	BatchMaxBytes int
	// Compression is the produce codec: none, gzip, snappy, lz4 or zstd.
	Compression string
	// MaxBufferedRecords and MaxBufferedBytes bound what the producer
	// holds before Produce blocks.
	MaxBufferedRecords int
	MaxBufferedBytes   int
	// MaxInflight is produce requests in flight per broker. Above 1 it
	// turns idempotent writes off (franz-go allows more only without
	// them, and allows 5 with them, the default).
	MaxInflight int
	// FetchMaxBytes, FetchMaxPartitionBytes and FetchMaxWait bound a fetch.
	FetchMaxBytes          int
	FetchMaxPartitionBytes int
	FetchMaxWait           time.Duration
}

var codecs = map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}

// Validate fails on a codec franz-go does not know or a negative size.
func (s Settings) Validate() error {
	if _, ok := codecs[s.Compression]; s.Compression != "" && !ok {
		return fmt.Errorf("compression %q: want none, gzip, snappy, lz4 or zstd", s.Compression)
	}
	if s.BatchMaxBytes < 0 || s.MaxBufferedRecords < 0 || s.MaxBufferedBytes < 0 || s.MaxInflight < 0 ||
		s.FetchMaxBytes < 0 || s.FetchMaxPartitionBytes < 0 || s.FetchMaxWait < 0 || s.Linger < 0 {
		return fmt.Errorf("client settings must not be negative: %+v", s)
	}
	return nil
}

// ProducerOpts are the producer's options for the set fields.
func (s Settings) ProducerOpts() []kgo.Opt {
	var out []kgo.Opt
	if s.Linger > 0 || s.NoLinger {
		out = append(out, kgo.ProducerLinger(s.Linger))
	}
	if s.BatchMaxBytes > 0 {
		out = append(out, kgo.ProducerBatchMaxBytes(int32(s.BatchMaxBytes)))
	}
	if c, ok := codecs[s.Compression]; ok {
		out = append(out, kgo.ProducerBatchCompression(c))
	}
	if s.MaxBufferedRecords > 0 {
		out = append(out, kgo.MaxBufferedRecords(s.MaxBufferedRecords))
	}
	if s.MaxBufferedBytes > 0 {
		out = append(out, kgo.MaxBufferedBytes(s.MaxBufferedBytes))
	}
	if s.MaxInflight > 1 {
		out = append(out, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(s.MaxInflight))
	}
	return out
}

// ConsumerOpts are the consumer's options for the set fields.
func (s Settings) ConsumerOpts() []kgo.Opt {
	var out []kgo.Opt
	if s.FetchMaxBytes > 0 {
		out = append(out, kgo.FetchMaxBytes(int32(s.FetchMaxBytes)))
	}
	if s.FetchMaxPartitionBytes > 0 {
		out = append(out, kgo.FetchMaxPartitionBytes(int32(s.FetchMaxPartitionBytes)))
	}
	if s.FetchMaxWait > 0 {
		out = append(out, kgo.FetchMaxWait(s.FetchMaxWait))
	}
	return out
}

// Args are the flags Register reads, for the set fields.
func (s Settings) Args() []string {
	var args []string
	add := func(flag, v string) { args = append(args, "--"+flag, v) }
	num := func(flag string, v int) {
		if v > 0 {
			add(flag, strconv.Itoa(v))
		}
	}
	if s.Linger > 0 || s.NoLinger {
		add("linger", s.Linger.String())
	}
	num("batch-max-bytes", s.BatchMaxBytes)
	if s.Compression != "" {
		add("compression", s.Compression)
	}
	num("max-buffered-records", s.MaxBufferedRecords)
	num("max-buffered-bytes", s.MaxBufferedBytes)
	num("max-inflight", s.MaxInflight)
	num("fetch-max-bytes", s.FetchMaxBytes)
	num("fetch-max-partition-bytes", s.FetchMaxPartitionBytes)
	if s.FetchMaxWait > 0 {
		add("fetch-max-wait", s.FetchMaxWait.String())
	}
	return args
}

// Register binds the flags Args writes to s in fs.
func (s *Settings) Register(fs *flag.FlagSet) {
	fs.Func("linger", "producer linger (default: franz-go's)", func(v string) error {
		d, err := time.ParseDuration(v)
		s.Linger, s.NoLinger = d, d == 0
		return err
	})
	fs.IntVar(&s.BatchMaxBytes, "batch-max-bytes", 0, "largest record batch the producer builds (0: franz-go's default)")
	fs.StringVar(&s.Compression, "compression", "", "produce codec: none, gzip, snappy, lz4, zstd (default: franz-go's)")
	fs.IntVar(&s.MaxBufferedRecords, "max-buffered-records", 0, "records the producer may buffer (0: franz-go's default)")
	fs.IntVar(&s.MaxBufferedBytes, "max-buffered-bytes", 0, "bytes the producer may buffer (0: unlimited)")
	fs.IntVar(&s.MaxInflight, "max-inflight", 0, "produce requests in flight per broker; above 1 turns idempotent writes off (0: franz-go's default, 5 with idempotence)")
	fs.IntVar(&s.FetchMaxBytes, "fetch-max-bytes", 0, "bytes one fetch may bring (0: franz-go's default)")
	fs.IntVar(&s.FetchMaxPartitionBytes, "fetch-max-partition-bytes", 0, "bytes one fetch may bring per partition (0: franz-go's default)")
	fs.DurationVar(&s.FetchMaxWait, "fetch-max-wait", 0, "how long a broker may hold a fetch for data (0: franz-go's default)")
}
