// Package measure holds reo-bench's instruments: the records it writes
// (RecordGen, Preload) and offers at a fixed rate (Pacer), the consumer
// that watches a destination topic (Watcher), the sampler of its last
// stable offsets that times a saturation run (StableWatcher, Window), the
// CPU and peak memory of processes from /proc (Sampler), reo's own
// /metrics (ScrapeReo, on internal/promscrape), latency percentiles, and
// the streaming oracle over a set of topics (Verify). Each instrument
// owns its goroutine; Stop or Close ends it.
package measure
