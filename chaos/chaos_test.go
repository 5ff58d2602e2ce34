package chaos_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestMain(m *testing.M) { cluster.RunTests(m) }

func inproc(t *testing.T, brokers int) cluster.Cluster {
	t.Helper()
	c, err := cluster.Shared(context.Background(), cluster.InProcess, cluster.Spec{Name: "chaos", Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// produceWithin produces one record and reports whether it was acknowledged
// within d (false: failed or still pending).
func produceWithin(ctx context.Context, cl *kgo.Client, d time.Duration) (bool, <-chan error) {
	done := make(chan error, 1)
	cl.Produce(ctx, kgo.StringRecord("x"), func(_ *kgo.Record, err error) { done <- err })
	select {
	case err := <-done:
		return err == nil, done
	case <-time.After(d):
		return false, done
	}
}

// TestNetworkFaultsBiteAndHeal proves each network fault stops or slows
// produce through the target's links while injected, and that after Heal
// the same client produces again and no toxic is left on any link.
func TestNetworkFaultsBiteAndHeal(t *testing.T) {
	c := inproc(t, 1)
	all := chaos.Target{Cluster: c}
	for _, tc := range []struct {
		fault chaos.Fault
		slow  bool // the fault delays rather than stops
	}{
		{fault: chaos.Blackhole(all)},
		{fault: chaos.ResetPeer(all, 0)},
		{fault: chaos.LinkDown(all)},
		{fault: chaos.LimitData(all, 10)},
		{fault: chaos.Latency(all, 1500*time.Millisecond, 0, false), slow: true},
		{fault: chaos.Bandwidth(all, 0, false)},
	} {
		t.Run(tc.fault.Name(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			topic := kafkatest.Topic(t.Name())
			if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, -1, nil); err != nil {
				t.Fatal(err)
			}
			cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(30*time.Second))...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if ok, _ := produceWithin(ctx, cl, 10*time.Second); !ok {
				t.Fatal("produce failed before the fault")
			}
			var pending <-chan error
			err = chaos.Apply(ctx, tc.fault, func(ctx context.Context) error {
				var ok bool
				ok, pending = produceWithin(ctx, cl, time.Second)
				if ok {
					return errors.New("a record was acknowledged within 1s through the faulty links")
				}
				return nil
			}, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range cluster.Links(c) {
				if got := l.Toxics(); len(got) != 0 || l.IsDown() {
					t.Fatalf("after Heal %s still has toxics %v, down=%v", l.Name(), got, l.IsDown())
				}
			}
			if tc.slow {
				if err := <-pending; err != nil {
					t.Fatalf("the delayed record failed instead of arriving late: %v", err)
				}
			}
			deadline := time.Now().Add(60 * time.Second)
			for {
				if ok, _ := produceWithin(ctx, cl, 10*time.Second); ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("produce did not recover after Heal")
				}
			}
		})
	}
}

// TestFaultsOnOneBrokerOnly proves a fault on one broker's link leaves the
// other brokers reachable: produce to a partition led elsewhere succeeds.
func TestFaultsOnOneBrokerOnly(t *testing.T) {
	c := inproc(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := kafkatest.Topic(t.Name())
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 6, -1, nil); err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int32{}
	parts, err := kafkatest.Leaders(ctx, cluster.DirectOpts(c), topic)
	if err != nil {
		t.Fatal(err)
	}
	for p, l := range parts {
		leaders[p] = l
	}
	victim := leaders[0]
	var other int32 = -1
	for p, l := range leaders {
		if l != victim {
			other = p
		}
	}
	if other < 0 {
		t.Skip("every partition has the same leader")
	}
	cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0}, &kgo.Record{Partition: other}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	f := chaos.Blackhole(chaos.Target{Cluster: c, Brokers: []int32{victim}})
	if !strings.Contains(f.Name(), "broker-") {
		t.Fatalf("fault name %q does not say which broker", f.Name())
	}
	err = chaos.Apply(ctx, f, func(ctx context.Context) error {
		pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
		defer pcancel()
		if err := cl.ProduceSync(pctx, &kgo.Record{Partition: other}).FirstErr(); err != nil {
			return errors.New("produce to a partition led by a healthy broker failed: " + err.Error())
		}
		return nil
	}, c)
	if err != nil {
		t.Fatal(err)
	}
}

// TestRequestErrorFault proves an in-process request fault answers the
// chosen request kind with the chosen error until healed.
func TestRequestErrorFault(t *testing.T) {
	c := inproc(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := kafkatest.Topic(t.Name())
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.DefaultProduceTopic(topic), kgo.RecordRetries(0), kgo.DisableIdempotentWrite())...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	f := &chaos.RequestError{Cluster: c, Key: kmsg.Produce, Err: kerr.InvalidRecord}
	err = chaos.Apply(ctx, f, func(ctx context.Context) error {
		err := cl.ProduceSync(ctx, kgo.StringRecord("x")).FirstErr()
		if !errors.Is(err, kerr.InvalidRecord) {
			return errors.New("produce under the fault returned " + errString(err) + ", want INVALID_RECORD")
		}
		return nil
	}, c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Hits() == 0 {
		t.Fatal("the fault answered no request")
	}
	if err := cl.ProduceSync(ctx, kgo.StringRecord("y")).FirstErr(); err != nil {
		t.Fatalf("produce after heal: %v", err)
	}
	if f.Name() == "" || !strings.Contains(f.Name(), "Produce") {
		t.Fatalf("name %q does not say which request", f.Name())
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestProcessFaults proves the fleet's process faults act on real
// processes: SIGKILL ends one and Heal starts a new one in the slot;
// SIGSTOP leaves it stopped (state T) and Heal resumes it.
func TestProcessFaults(t *testing.T) {
	sleep, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary itself is the child: it sleeps in TestHelperSleep.
	f := &systems.Fleet{Cmd: func(int) (systems.Cmd, error) {
		return systems.Cmd{Path: sleep, Args: []string{"-test.run=^TestHelperSleep$"}, Env: []string{"REO_CHAOS_SLEEP=1"}}, nil
	}}
	defer f.StopAll(5 * time.Second)
	ctx := context.Background()
	first, err := f.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	kill := chaos.KillInstance{Fleet: f, Slot: 0}
	if err := kill.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	if first.Running() {
		t.Fatal("instance still running after SIGKILL")
	}
	if err := kill.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	second := f.Instance(0)
	if second == nil || second == first || !second.Running() {
		t.Fatal("Heal did not start a new process in the slot")
	}
	pause := chaos.PauseInstance{Fleet: f, Slot: 0}
	if err := pause.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	waitState(t, second.Pid(), "T")
	if err := pause.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	waitState(t, second.Pid(), "S")
}

func waitState(t *testing.T, pid int, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if f[0] == want || (want == "S" && f[0] == "R") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d in state %s, want %s", pid, f[0], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHelperSleep is the child process of TestProcessFaults.
func TestHelperSleep(t *testing.T) {
	if os.Getenv("REO_CHAOS_SLEEP") == "" {
		t.Skip("child process of TestProcessFaults")
	}
	time.Sleep(2 * time.Minute)
}
