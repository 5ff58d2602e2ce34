package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/oracle"
)

// Converged is the last look Converge took.
type Converged struct {
	Verdict oracle.Verdict
	Source  oracle.Log
	Dest    oracle.Log
}

// Converge polls until the destination holds everything the source does
// (the oracle's verdict is clean) or ctx ends, reading both clusters
// directly (bypassing the proxies). It stops early on any violation other
// than lost records, which waiting cannot heal.
func Converge(ctx context.Context, src, dst cluster.Cluster, topics []string, m oracle.Mapping, hist *oracle.History) (Converged, error) {
	var (
		last Converged
		err  error
	)
	dstTopics := make([]string, len(topics))
	for i, t := range topics {
		if dstTopics[i], _ = m.Map(t); dstTopics[i] == "" {
			dstTopics[i] = t
		}
	}
	for {
		var s, d oracle.Log
		s, err = Dump(ctx, cluster.DirectOpts(src), topics...)
		if err == nil {
			d, err = Dump(ctx, cluster.DirectOpts(dst), dstTopics...)
		}
		if err == nil {
			last = Converged{oracle.Check(s, d, m, hist), s, d}
			if last.Verdict.OK() || !onlyLost(last.Verdict) {
				return last, nil
			}
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("destination never caught up")
			}
			return last, fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func onlyLost(v oracle.Verdict) bool {
	for k, n := range v.Counts {
		if n > 0 && k != oracle.KindLost {
			return false
		}
	}
	return true
}

// MergeHistories joins the histories of several workloads.
func MergeHistories(hs ...*oracle.History) *oracle.History {
	out := &oracle.History{}
	for _, h := range hs {
		out.Writes = append(out.Writes, h.Writes...)
		out.Txns = append(out.Txns, h.Txns...)
	}
	return out
}
