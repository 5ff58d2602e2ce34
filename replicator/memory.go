package replicator

// Memory an instance keeps live, for a process that bounds its heap (the
// reo command's --memory-limit auto).

// perRecordState is what a record of about 100 B costs in client state
// besides its own bytes, as a multiple of them: the fetched record's
// struct, its encoding in the produce batch and the fetch response it
// points into. 100 B records kept 76-106 MB live with 48 MiB of record
// bytes in flight (four shards at the defaults, one source broker:
// reports/bench-memlimit); larger records cost less over their bytes.
const perRecordState = 2

// perPartitionState is the client metadata and per-partition state a
// copied partition keeps live with four shards: about 35 MB for 5,000
// partitions over an instance's clients (reports/bench-cost). Each shard's
// clients know every partition of its topics, so it grows with the shards.
const perPartitionState = 8 << 10

// InflightBound is the most record bytes one instance holds when it owns
// every shard, by the configured bounds: MaxInflightBytes when set, else
// shards × ((source brokers + 1) × FetchMaxBytes + BatchMaxBytes), with at
// least DefaultShards shards (fewer shards with partitions fetch more each,
// up to what four do). brokers is the source cluster's broker count (at
// least 1).
func (c *Config) InflightBound(shards, brokers int) int64 {
	if c.MaxInflightBytes > 0 {
		return c.MaxInflightBytes
	}
	fetch, batch := int64(c.FetchMaxBytes), int64(c.BatchMaxBytes)
	if fetch <= 0 {
		fetch = DefaultFetchMaxBytes
	}
	if batch <= 0 {
		batch = DefaultBatchMaxBytes
	}
	return int64(max(shards, DefaultShards)) * (int64(max(brokers, 1)+1)*fetch + batch)
}

// MemoryEstimate is the heap one instance of this replication may keep
// live when it owns every shard: its InflightBound (at the shard count
// found when Run connected and the source's current broker count) twice
// over for the client state of small records, plus the state of each
// partition in the current plan, scaled by shards over four. It is 0 until
// Run has connected. It is an estimate from the settings: a compressed
// source, whose records take more room decompressed than fetched, keeps
// more live (the reo command's auto limit also follows the live heap).
func (r *Replicator) MemoryEstimate() int64 {
	shards := r.memShards.Load()
	if shards == 0 {
		return 0
	}
	parts := 0
	if p, _ := r.currentPlan(); p != nil {
		for _, pp := range p.shards {
			parts += len(pp)
		}
	}
	return MemoryEstimateFor(r.memInflight.Load(), int(shards), parts)
}

// MemoryEstimateFor is MemoryEstimate's arithmetic: inflight (an
// InflightBound) twice over, plus 8 KiB for each of partitions, times
// max(shards, DefaultShards) over DefaultShards.
func MemoryEstimateFor(inflight int64, shards, partitions int) int64 {
	return int64(perRecordState)*inflight + int64(partitions)*perPartitionState*int64(max(shards, DefaultShards))/DefaultShards
}
