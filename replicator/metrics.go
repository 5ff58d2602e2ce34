package replicator

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics is the Prometheus metric set of one Replicator. All names start with
// "reo_". Per-topic labels use the source topic name.
type metrics struct {
	records       *prometheus.CounterVec   // topic
	bytes         *prometheus.CounterVec   // topic
	committed     prometheus.Counter       //
	aborted       prometheus.Counter       //
	commitLatency prometheus.Histogram     //
	commitPhase   *prometheus.HistogramVec // phase
	e2eLatency    prometheus.Histogram     //
	lag           *prometheus.GaugeVec     // topic, partition
	shardsOwned   prometheus.Gauge         //
	skipped       *prometheus.CounterVec   // topic, reason
	restarts      *prometheus.CounterVec   // reason
	ready         prometheus.GaugeFunc     //
	reasons       prometheus.GaugeFunc     //
	blocked       prometheus.Gauge         //
	resyncs       *prometheus.CounterVec   // topic, reason
	adopted       *prometheus.CounterVec   // topic

	groupsSynced      prometheus.Gauge       //
	groupSyncLast     prometheus.Gauge       //
	groupSyncRounds   *prometheus.CounterVec // result
	translateFailures *prometheus.CounterVec // reason
	forcedRebalances  prometheus.Counter     //
	groupSyncSkipped  *prometheus.CounterVec // reason
	all               []prometheus.Collector //
}

func newMetrics(reg prometheus.Registerer, ready func() bool, reasons func() float64) (*metrics, error) {
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reo_records_replicated_total", Help: "Records committed to the destination, by source topic.",
		}, []string{"topic"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reo_bytes_replicated_total", Help: "Key+value+header bytes committed to the destination, by source topic.",
		}, []string{"topic"}),
		committed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reo_transactions_committed_total", Help: "Destination transactions committed.",
		}),
		aborted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reo_transactions_aborted_total", Help: "Destination transactions aborted or failed (their records were discarded and will be copied again).",
		}),
		commitLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "reo_commit_latency_seconds", Help: "Time to flush and commit one destination transaction.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		commitPhase: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "reo_commit_phase_seconds", Help: "Time of each step of a commit: flush (the transaction's records and checkpoints, produced together), end (EndTxn), markers (after EndTxn, until the coordinator reports the commit markers written; when caught up toward a near destination, and after every transaction into 100 or more partitions).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"phase"}),
		e2eLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "reo_replication_latency_seconds", Help: "At commit, now minus the source timestamp of the oldest record committed, per partition and transaction.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 20),
		}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "reo_partition_lag_records", Help: "Source high watermark minus the committed next offset (or the log start, before the first commit), for every source partition the replication copies, whoever owns its shard: every instance reads the checkpoint topic, so aggregate with max. Refreshed every topic refresh and at this instance's commits; it grows while a shard cannot commit. Once the shard has read and committed everything readable, trailing transaction markers and aborted records do not count: a caught-up partition shows 0.",
		}, []string{"topic", "partition"}),
		shardsOwned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "reo_shards_owned", Help: "Shards this instance owns.",
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reo_skipped_records_total", Help: "Source offsets skipped because AllowDataLoss is set, by reason (source_gap, too_large).",
		}, []string{"topic", "reason"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reo_shard_restarts_total", Help: "Shard workers restarted from their checkpoint, by reason (error, fenced, batch_limit: a destination topic's max.message.bytes changed since the shard's producer first wrote to it; dest_recreated: a destination topic it wrote to was deleted and created again).",
		}, []string{"reason"}),
		ready: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "reo_ready", Help: "1 when /readyz says ready: both clusters answer, the ownership group is joined, every selected topic is copied and every owned shard is making progress or caught up.",
		}, func() float64 {
			if ready() {
				return 1
			}
			return 0
		}),
	}
	m.reasons = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "reo_unready_reasons", Help: "How many reasons /readyz gives for not being ready (0 when ready).",
	}, reasons)
	m.blocked = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "reo_topics_blocked", Help: "Selected source topics not copied now (their destination topic cannot be created, grown or described); /readyz names them and why.",
	})
	m.resyncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reo_resyncs_total", Help: "Source partitions copied again from their log start because their checkpoint no longer matched (ResyncChangedTopics), by source topic and reason.",
	}, []string{"topic", "reason"})
	m.adopted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reo_adopted_partitions_total", Help: "Source partitions without checkpoint continued after the records another tool put into their destination partition (AdoptDestination), by source topic.",
	}, []string{"topic"})
	m.groupsSynced = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "reo_group_sync_groups", Help: "Consumer groups that got offsets committed on the destination in the last sync round of this instance.",
	})
	m.groupSyncLast = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "reo_group_sync_last_success_timestamp_seconds", Help: "When this instance last completed a consumer group offset sync round in which no selected group failed (Unix seconds); time() minus it is the sync age. A group whose offsets cannot be read or committed (e.g. a missing ACL) keeps it from advancing.",
	})
	m.groupSyncRounds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reo_group_sync_rounds_total", Help: "Consumer group offset sync rounds of this instance, by result: ok, or failed (a selected group's offsets could not be read or committed; the warning names it).",
	}, []string{"result"})
	m.groupSyncRounds.WithLabelValues("ok")
	m.groupSyncRounds.WithLabelValues("failed")
	m.translateFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reo_group_offset_translation_failures_total", Help: "Source group offsets not translated, by reason (e.g. older than the copy history, destination position not known yet).",
	}, []string{"reason"})
	m.groupSyncSkipped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reo_group_sync_skipped_total", Help: "Group sync rounds that left a group alone, by reason (active_members: consumers use it on the destination).",
	}, []string{"reason"})
	m.forcedRebalances = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "reo_ownership_rebalances_forced_total", Help: "Ownership group rebalances this instance asked for because shards stayed behind with no instance copying them.",
	})
	m.all = []prometheus.Collector{m.forcedRebalances, m.groupsSynced, m.groupSyncLast, m.groupSyncRounds, m.translateFailures, m.groupSyncSkipped, m.reasons, m.blocked, m.resyncs, m.adopted, m.records, m.bytes, m.committed, m.aborted, m.commitLatency, m.commitPhase,
		m.e2eLatency, m.lag, m.shardsOwned, m.skipped, m.restarts, m.ready}
	if reg == nil {
		return m, nil
	}
	for i, c := range m.all {
		if err := reg.Register(c); err != nil {
			for _, r := range m.all[:i] {
				reg.Unregister(r)
			}
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) setLag(topic string, partition int32, lag int64) {
	m.lag.WithLabelValues(topic, strconv.Itoa(int(partition))).Set(float64(lag))
}

func (m *metrics) dropLag(topic string, partition int32) {
	m.lag.DeleteLabelValues(topic, strconv.Itoa(int(partition)))
}
