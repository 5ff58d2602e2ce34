package main

import (
	"sort"
	"strings"
)

// The keys of a MirrorMaker 2 file, as Kafka 4.3's MirrorMakerConfig,
// MirrorSourceConfig, MirrorCheckpointConfig, MirrorHeartbeatConfig,
// MirrorClientConfig and DistributedConfig define them, and what reo does
// with each. Every key of a file is either honoured or named once in a
// warning that says why it is ignored; a key found in none of these lists
// is unknown, and one close to a known key is called out as a likely typo.

// mm2FlowKeys are the connector keys reo honours. MirrorMaker 2 reads them
// at the top level (every flow) and as "A->B.key" (one flow, winning).
var mm2FlowKeys = map[string]bool{
	"enabled": true, "topics": true, "topics.exclude": true, "topics.blacklist": true,
	"groups": true, "groups.exclude": true, "groups.blacklist": true,
	"replication.policy.class": true, "replication.policy.separator": true,
	"replication.policy.internal.topic.separator.enabled": true,
	"replication.factor": true, "refresh.topics.interval.seconds": true, "refresh.topics.enabled": true,
	"sync.group.offsets.enabled": true, "sync.group.offsets.interval.seconds": true,
	"emit.checkpoints.enabled": true, "emit.heartbeats.enabled": true, "tasks.max": true,
	"topic.filter.class": true, "group.filter.class": true,
	"key.converter": true, "value.converter": true, "header.converter": true,
	"transforms": true, "predicates": true,
}

// mm2ReoFlowKeys are reo's own per-flow keys ("A->B.reo.name"); MirrorMaker
// 2 ignores them, so a file that uses them still works there.
var mm2ReoFlowKeys = map[string]bool{"reo.name": true}

// mm2ClusterKeys are the client keys reo honours, per cluster ("A.key")
// and at the top level (every cluster that does not set its own).
var mm2ClusterKeys = map[string]bool{
	"bootstrap.servers": true, "security.protocol": true, "sasl.mechanism": true, "sasl.jaas.config": true,
	"ssl.truststore.location": true, "ssl.truststore.password": true, "ssl.truststore.type": true,
	"ssl.truststore.certificates": true,
	"ssl.keystore.location":       true, "ssl.keystore.password": true, "ssl.keystore.type": true,
	"ssl.keystore.key": true, "ssl.keystore.certificate.chain": true, "ssl.key.password": true,
	"ssl.endpoint.identification.algorithm": true, "ssl.enabled.protocols": true,
}

// mm2SecretKeys hold secrets: their values are never printed or logged,
// and a " #" in them is only warned about (it may be part of a password).
var mm2SecretKeys = map[string]bool{
	"sasl.jaas.config": true, "ssl.truststore.password": true, "ssl.keystore.password": true,
	"ssl.key.password": true, "ssl.keystore.key": true,
}

// Reasons keys are ignored, shared by several keys.
const (
	whyConnectStorage = "a Connect worker's internal topic: reo runs no Connect worker; its own state lives in __reo-<name>-control and __reo-<name>-checkpoints on the destination, created with replication.factor"
	whyConnectWorker  = "a Connect worker setting: reo runs no Connect worker"
	whyMM2Internal    = "configures one of MirrorMaker 2's internal topics (heartbeats, checkpoints, offset-syncs): reo writes none of them"
	whyHeartbeats     = "reo emits no heartbeats: watch reo's lag (reo_partition_lag_records) and /readyz instead"
	whyConnector      = "a Connect connector setting with no counterpart in reo"
	whyClient         = "a Kafka client setting: reo's clients use their own (transactions, read_committed, idempotence)"
	whyRest           = "MirrorMaker 2's REST server: reo serves /metrics, /healthz and /readyz on --metrics-addr"
	whySetByMM2       = "MirrorMaker 2 sets it itself for each flow"
	whyTopicConfigs   = "reo copies cleanup.policy, retention, max.message.bytes, compression and segment settings when it creates a destination topic, and does not keep topic configs in sync afterwards"
	whyACLs           = "reo does not copy ACLs: grant them on the destination"
	whyGroupsRefresh  = "reo lists the source's groups at every group offset sync"
	whyMetrics        = "reo's metrics are Prometheus metrics on --metrics-addr (reo_*), labelled by flow"
	whyExactlyOnce    = "reo always copies exactly once (records and source positions commit in one destination transaction); MirrorMaker 2's exactly-once settings are not needed"
	whySSLTuning      = "TLS tuning of the JVM: reo uses Go's TLS (1.2 or 1.3, secure cipher suites)"
	whyJaasTuning     = "JAAS login tuning: reo reads the user and password from sasl.jaas.config once at start"
	whyKerberos       = "Kerberos (GSSAPI) is not supported by reo: use PLAIN or SCRAM"
	whyOAuth          = "OAUTHBEARER is not supported by reo: use PLAIN or SCRAM"
	whyCheckpointsIvl = "reo writes no checkpoints topic: it commits translated offsets to the groups themselves every sync.group.offsets.interval.seconds (when sync.group.offsets.enabled=true)"
	whyOffsetLag      = "MirrorMaker 2's offset-sync granularity: reo translates group offsets exactly, from its own checkpoints"
)

// mm2Ignored maps keys reo knows and ignores to why. Keys are matched
// whole, at the top level, per cluster ("A.key") and per flow ("A->B.key").
var mm2Ignored = map[string]string{
	// Connect worker: storage topics and group.
	"group.id":                                whyConnectWorker + " (reo's ownership group is reo-<name>)",
	"offset.storage.topic":                    whyConnectStorage,
	"offset.storage.replication.factor":       whyConnectStorage,
	"offset.storage.partitions":               whyConnectStorage,
	"config.storage.topic":                    whyConnectStorage,
	"config.storage.replication.factor":       whyConnectStorage,
	"status.storage.topic":                    whyConnectStorage,
	"status.storage.replication.factor":       whyConnectStorage,
	"status.storage.partitions":               whyConnectStorage,
	"offset.flush.interval.ms":                whyConnectWorker + " (reo commits every --commit-interval)",
	"offset.flush.timeout.ms":                 whyConnectWorker,
	"exactly.once.source.support":             whyExactlyOnce,
	"exactly.once.support":                    whyExactlyOnce,
	"transaction.boundary":                    whyExactlyOnce,
	"transaction.boundary.interval.ms":        whyExactlyOnce + " (transactions last at most --commit-interval)",
	"offsets.storage.topic":                   whyConnectStorage,
	"topic.creation.enable":                   whyConnectWorker,
	"topic.creation.groups":                   whyConnector,
	"plugin.path":                             whyConnectWorker,
	"plugin.discovery":                        whyConnectWorker,
	"connect.protocol":                        whyConnectWorker,
	"scheduled.rebalance.max.delay.ms":        whyConnectWorker,
	"session.timeout.ms":                      whyConnectWorker + " (reo's is --session-timeout)",
	"heartbeat.interval.ms":                   whyConnectWorker,
	"rebalance.timeout.ms":                    whyConnectWorker,
	"worker.sync.timeout.ms":                  whyConnectWorker,
	"worker.unsync.backoff.ms":                whyConnectWorker,
	"task.shutdown.graceful.timeout.ms":       whyConnectWorker,
	"topic.tracking.enable":                   whyConnectWorker,
	"topic.tracking.allow.reset":              whyConnectWorker,
	"connector.client.config.override.policy": whyConnectWorker,
	"inter.worker.key.generation.algorithm":   whyConnectWorker,
	"inter.worker.key.size":                   whyConnectWorker,
	"inter.worker.key.ttl.ms":                 whyConnectWorker,
	"inter.worker.signature.algorithm":        whyConnectWorker,
	"inter.worker.verification.algorithms":    whyConnectWorker,
	"key.converter.plugin.version":            whyConnector,
	"value.converter.plugin.version":          whyConnector,
	"header.converter.plugin.version":         whyConnector,
	"connector.plugin.version":                whyConnector,
	"config.action.reload":                    whyConnector,
	"errors.log.enable":                       whyConnector,
	"errors.log.include.messages":             whyConnector,
	"errors.retry.delay.max.ms":               whyConnector,
	"errors.retry.timeout":                    whyConnector,
	"errors.tolerance":                        whyConnector + " (reo never skips a record unless --allow-data-loss)",
	"tasks.max.enforce":                       whyConnector,
	// REST.
	"listeners":                           whyRest,
	"admin.listeners":                     whyRest,
	"rest.advertised.host.name":           whyRest,
	"rest.advertised.listener":            whyRest,
	"rest.advertised.port":                whyRest,
	"rest.extension.classes":              whyRest,
	"access.control.allow.methods":        whyRest,
	"access.control.allow.origin":         whyRest,
	"response.http.headers.config":        whyRest,
	"dedicated.mode.enable.internal.rest": whyRest + "; reo instances coordinate through Kafka's group protocol",
	// Set by MM2.
	"name":                 whySetByMM2,
	"connector.class":      whySetByMM2,
	"source.cluster.alias": "reo takes a flow's source alias from clusters and A->B (MirrorMaker 2 sets it so unless the file does; under DefaultReplicationPolicy another value is refused)",
	"target.cluster.alias": "reo takes a flow's target alias from clusters and A->B (MirrorMaker 2 sets it so unless the file does; under DefaultReplicationPolicy another value is refused)",
	// MirrorMaker 2's internal topics, heartbeats, checkpoints.
	"emit.heartbeats.interval.seconds":      whyHeartbeats,
	"heartbeats.topic.replication.factor":   whyMM2Internal,
	"heartbeats.replication.enabled":        whyHeartbeats + " (a heartbeats topic is copied only when topics selects it)",
	"checkpoints.topic.replication.factor":  whyMM2Internal,
	"offset-syncs.topic.replication.factor": whyMM2Internal,
	"offset-syncs.topic.location":           whyMM2Internal,
	"emit.offset-syncs.enabled":             whyMM2Internal,
	"emit.checkpoints.interval.seconds":     whyCheckpointsIvl,
	"offset.lag.max":                        whyOffsetLag,
	"sync.topic.configs.enabled":            whyTopicConfigs,
	"sync.topic.configs.interval.seconds":   whyTopicConfigs,
	"config.properties.exclude":             whyTopicConfigs,
	"config.properties.blacklist":           whyTopicConfigs,
	"config.property.filter.class":          whyTopicConfigs,
	"use.incremental.alter.configs":         whyTopicConfigs,
	"sync.topic.acls.enabled":               whyACLs,
	"sync.topic.acls.interval.seconds":      whyACLs,
	"refresh.groups.enabled":                whyGroupsRefresh,
	"refresh.groups.interval.seconds":       whyGroupsRefresh,
	"consumer.poll.timeout.ms":              "MirrorMaker 2's poll timing: reo fetches with a 500 ms wait",
	"admin.timeout.ms":                      "MirrorMaker 2's admin timeout: reo retries admin requests with backoff",
	"forwarding.admin.class":                "reo creates destination topics with its own admin client: a custom ForwardingAdmin is not run",
	"metric.reporters":                      whyMetrics,
	"metric.names.formats":                  whyMetrics,
	"metrics.num.samples":                   whyMetrics,
	"metrics.recording.level":               whyMetrics,
	"metrics.sample.window.ms":              whyMetrics,
	"add.source.alias.to.metrics":           whyMetrics,
	// Client settings reo does not take.
	"ssl.protocol":                             whySSLTuning,
	"ssl.cipher.suites":                        whySSLTuning,
	"ssl.provider":                             whySSLTuning,
	"ssl.keymanager.algorithm":                 whySSLTuning,
	"ssl.trustmanager.algorithm":               whySSLTuning,
	"ssl.secure.random.implementation":         whySSLTuning,
	"ssl.engine.factory.class":                 whySSLTuning + " (a custom SslEngineFactory is not run)",
	"sasl.client.callback.handler.class":       "reo reads the user and password from sasl.jaas.config only: a custom callback handler is not run",
	"sasl.login.callback.handler.class":        whyJaasTuning,
	"sasl.login.class":                         whyJaasTuning,
	"client.id":                                whyClient,
	"client.dns.lookup":                        whyClient,
	"connections.max.idle.ms":                  whyClient,
	"metadata.max.age.ms":                      whyClient,
	"metadata.recovery.strategy":               whyClient,
	"metadata.recovery.rebootstrap.trigger.ms": whyClient,
	"receive.buffer.bytes":                     whyClient,
	"send.buffer.bytes":                        whyClient,
	"reconnect.backoff.ms":                     whyClient,
	"reconnect.backoff.max.ms":                 whyClient,
	"request.timeout.ms":                       whyClient,
	"retry.backoff.ms":                         whyClient,
	"retry.backoff.max.ms":                     whyClient,
	"socket.connection.setup.timeout.ms":       whyClient,
	"socket.connection.setup.timeout.max.ms":   whyClient,
	// Not MirrorMaker 2 keys at all, but common in files written from
	// Connect examples: the fixture of issue 12 has them.
	"heartbeat.storage.topic":              "not a MirrorMaker 2 or Connect setting (MirrorMaker 2 ignores it too); MirrorMaker 2's heartbeats topic is always named heartbeats, and reo writes none",
	"heartbeat.storage.replication.factor": "not a MirrorMaker 2 or Connect setting (MirrorMaker 2 ignores it too); reo writes no heartbeats topic",
}

// mm2IgnoredPrefixes are families of keys ignored for one reason.
var mm2IgnoredPrefixes = []struct{ prefix, why string }{
	{"sasl.kerberos.", whyKerberos},
	{"sasl.oauthbearer.", whyOAuth},
	{"sasl.login.", whyJaasTuning},
	{"producer.", whyClient},
	{"consumer.", whyClient},
	{"admin.", whyClient},
	{"source.cluster.", whyClient + " (per-flow client overrides are not supported: set A.key for the cluster)"},
	{"target.cluster.", whyClient + " (per-flow client overrides are not supported: set A.key for the cluster)"},
	{"source.admin.", whyClient},
	{"target.admin.", whyClient},
	{"source.producer.", whyClient},
	{"target.producer.", whyClient},
	{"source.consumer.", whyClient},
	{"target.consumer.", whyClient},
	{"transforms.", "part of transforms"},
	{"predicates.", "part of predicates"},
	{"key.converter.", whyConnector},
	{"value.converter.", whyConnector},
	{"header.converter.", whyConnector},
	{"errors.", whyConnector},
	{"topic.creation.", whyConnector},
	{"rest.", whyRest},
	{"metrics.", whyMetrics},
}

// ignoredWhy says why reo ignores key (without any alias prefix), or "".
func ignoredWhy(key string) string {
	if why, ok := mm2Ignored[key]; ok {
		return why
	}
	for _, p := range mm2IgnoredPrefixes {
		if strings.HasPrefix(key, p.prefix) {
			return p.why
		}
	}
	return ""
}

// knownMM2Keys lists every key name reo knows (honoured or ignored), for
// typo suggestions.
func knownMM2Keys() []string {
	var out []string
	for _, m := range []map[string]bool{mm2FlowKeys, mm2ClusterKeys, mm2ReoFlowKeys} {
		for k := range m {
			out = append(out, k)
		}
	}
	for k := range mm2Ignored {
		out = append(out, k)
	}
	out = append(out, "clusters", "config.providers")
	sort.Strings(out)
	return out
}

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions and swaps of neighbours).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// likelyTypo returns the known key closest to key when it is close enough
// to be a typo of it (one edit for short keys, two for longer ones, or a
// singular/plural slip), else "".
func likelyTypo(key string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if k == key {
			return ""
		}
		d := editDistance(key, k)
		if d < bestD {
			best, bestD = k, d
		}
	}
	limit := 1
	if len(key) >= 8 {
		limit = 2
	}
	if bestD <= limit {
		return best
	}
	return ""
}
