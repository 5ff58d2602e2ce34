package kgotuning_test

import (
	"flag"
	"testing"
	"time"

	"github.com/reo-kafka/reo/internal/kgotuning"
)

// TestArgsRoundTrip proves that what Args writes, Register reads back to
// the same settings, that the zero settings write no flag and set no
// option, and that Validate refuses an unknown codec.
func TestArgsRoundTrip(t *testing.T) {
	in := kgotuning.Settings{Linger: 5 * time.Millisecond, BatchMaxBytes: 1 << 20, Compression: "none", MaxBufferedRecords: 1000,
		MaxBufferedBytes: 1 << 26, MaxInflight: 3, FetchMaxBytes: 1 << 26, FetchMaxPartitionBytes: 1 << 23, FetchMaxWait: 200 * time.Millisecond}
	var out kgotuning.Settings
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	out.Register(fs)
	if err := fs.Parse(in.Args()); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("read back %+v, want %+v", out, in)
	}
	if len(in.ProducerOpts()) != 7 || len(in.ConsumerOpts()) != 3 {
		t.Errorf("%d producer and %d consumer options, want 7 (two for max-inflight) and 3", len(in.ProducerOpts()), len(in.ConsumerOpts()))
	}
	var zero kgotuning.Settings
	if len(zero.Args()) != 0 || len(zero.ProducerOpts()) != 0 || len(zero.ConsumerOpts()) != 0 {
		t.Errorf("zero settings: args %q", zero.Args())
	}
	var noLinger kgotuning.Settings
	fs = flag.NewFlagSet("y", flag.ContinueOnError)
	noLinger.Register(fs)
	if err := fs.Parse([]string{"--linger", "0s"}); err != nil || !noLinger.NoLinger || len(noLinger.ProducerOpts()) != 1 {
		t.Errorf("--linger 0s: %+v %v", noLinger, err)
	}
	if err := (kgotuning.Settings{Compression: "brotli"}).Validate(); err == nil {
		t.Error("an unknown codec passed Validate")
	}
}
