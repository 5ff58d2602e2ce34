package chaos

import (
	"context"
	"fmt"
	"sync"

	"github.com/reo-kafka/reo/cluster"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RequestError makes an in-process cluster answer every request of one
// kind (Produce, EndTxn, InitProducerID, AddPartitionsToTxn, Fetch, ...)
// with Err until healed: kfake's request hooks, for faults a proxy cannot
// make.
type RequestError struct {
	Cluster cluster.Cluster
	Key     kmsg.Key
	Err     *kerr.Error

	mu     sync.Mutex // guards handle and healed
	handle *kfake.FaultHandle
	healed int // hits of handles already removed
}

func (r *RequestError) Name() string {
	return fmt.Sprintf("request_error(%s,%s,%s)", r.Cluster.Name(), r.Key.Name(), r.Err.Message)
}

func (r *RequestError) Inject(context.Context) error {
	f, ok := r.Cluster.(cluster.Faker)
	if !ok {
		return fmt.Errorf("%s: only in-process clusters take request faults", r.Name())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handle == nil {
		r.handle = f.Fake().Fault(kfake.Fault{Keys: []kmsg.Key{r.Key}, Err: r.Err, Count: -1})
	}
	return nil
}

func (r *RequestError) Heal(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handle != nil {
		r.healed += r.handle.Hits()
		r.handle.Remove()
		r.handle = nil
	}
	return nil
}

// Hits is how many requests the fault answered.
func (r *RequestError) Hits() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handle == nil {
		return r.healed
	}
	return r.healed + r.handle.Hits()
}
