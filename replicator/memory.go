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
// copied partition keeps live: about 35 MB for 5,000 partitions over an
// instance's clients (reports/bench-cost).
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
// live when it owns every shard: its InflightBound at the shard count and
// source brokers found when Run connected, twice over for the client state
// of small records, plus the state of each partition in the current plan.
// It is 0 until Run has connected (the shard count is known then).
func (r *Replicator) MemoryEstimate() int64 {
	shards, brokers := r.memShards.Load(), r.memBrokers.Load()
	if shards == 0 {
		return 0
	}
	n := int64(perRecordState) * r.cfg.InflightBound(int(shards), int(brokers))
	if p, _ := r.currentPlan(); p != nil {
		for _, parts := range p.shards {
			n += int64(len(parts)) * perPartitionState
		}
	}
	return n
}
