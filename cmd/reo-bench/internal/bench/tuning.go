package bench

import (
	"time"

	"github.com/reo-kafka/reo/systems"
)

// pipeTuning is how reo-bench runs the pipe and its ceilings: an
// at-least-once franz-go loop tuned for throughput on this workload's
// records, as one would tune it by hand.
//
//   - no compression: the records are random bytes, so a codec costs CPU
//     and saves nothing;
//   - a 5 ms linger and 1 MiB batches: at saturation batches fill before
//     the linger, at a fixed rate it bounds the wait;
//   - up to 200,000 records or 256 MiB buffered, so polls of a whole
//     fetch never block on the producer;
//   - idempotent writes kept, with their 5 produce requests in flight per
//     broker (more needs idempotence off and risks reordering on retry);
//   - fetches of up to 64 MiB, 8 MiB per partition (franz-go's 1 MiB per
//     partition starves a single partition), and a 200 ms fetch wait.
var pipeTuning = systems.PipeTuning{
	Linger:                 5 * time.Millisecond,
	BatchMaxBytes:          1 << 20,
	Compression:            "none",
	MaxBufferedRecords:     200_000,
	MaxBufferedBytes:       256 << 20,
	FetchMaxBytes:          64 << 20,
	FetchMaxPartitionBytes: 8 << 20,
	FetchMaxWait:           200 * time.Millisecond,
}
