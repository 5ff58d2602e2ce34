package bench

import (
	"context"
	"time"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
)

// brokerJVM is a broker's JVM and its threads' Java names (nil: unknown,
// the kernel's names serve).
type brokerJVM struct {
	pid   int
	names map[int]string
}

// threadSampleEvery is how often a saturation run reads the brokers'
// threads' CPU: each read is a few hundred small /proc files, so less
// often than the process totals.
const threadSampleEvery = 250 * time.Millisecond

// nameBrokerThreads learns the Java names of the threads of cluster's
// broker JVMs pids (jcmd), once, when the cluster has started: Kafka makes
// its request handlers, network threads and transaction senders then.
// Without jcmd the kernel's 15-character names serve, which do not tell
// request handlers from network threads; the progress log says so once.
func (b *bench) nameBrokerThreads(ctx context.Context, cluster string, pids []int) {
	if b.brokerJVMs == nil {
		b.brokerJVMs = map[string][]brokerJVM{}
	}
	for _, pid := range pids {
		names, err := measure.JVMThreadNames(ctx, pid)
		if err != nil {
			b.prog.Logf("%s broker %d: its threads' Java names are unknown (%v): its request handlers and network threads count as other", cluster, pid, err)
		}
		b.brokerJVMs[cluster] = append(b.brokerJVMs[cluster], brokerJVM{pid, names})
	}
}

// clusterThreads samples the brokers' threads of each cluster.
type clusterThreads map[string]*measure.ThreadSampler

// brokerThreadSamplers starts a thread sampler per cluster with broker
// JVMs (none for in-process clusters).
func (b *bench) brokerThreadSamplers() clusterThreads {
	out := clusterThreads{}
	for cluster, jvms := range b.brokerJVMs {
		s := measure.NewThreadSampler(threadSampleEvery, measure.BrokerThreadGroup)
		for _, j := range jvms {
			s.Add(j.pid, j.names)
		}
		s.Start()
		out[cluster] = s
	}
	return out
}

func (c clusterThreads) stop() {
	for _, s := range c {
		s.Stop()
	}
}

// perGB is each cluster's broker CPU seconds by thread group from a to z,
// per GB copied in that window.
func (c clusterThreads) perGB(a, z time.Time, gb float64) map[string]map[string]float64 {
	if len(c) == 0 || gb <= 0 {
		return nil
	}
	out := map[string]map[string]float64{}
	for cluster, s := range c {
		m := map[string]float64{}
		for g, sec := range s.Between(a, z) {
			m[g] = sec / gb
		}
		out[cluster] = m
	}
	return out
}
