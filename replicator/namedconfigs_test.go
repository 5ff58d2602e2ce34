package replicator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// describedConfigs is a DescribeConfigs answer for n topics t0..t(n-1),
// each with a max.message.bytes of its own; every tenth topic failed.
func describedConfigs(n int) kadm.ResourceConfigs {
	rcs := make(kadm.ResourceConfigs, n)
	for i := range rcs {
		v := fmt.Sprint(1000 + i)
		rcs[i] = kadm.ResourceConfig{Name: fmt.Sprintf("t%d", i), Configs: []kadm.Config{{Key: "max.message.bytes", Value: &v}}}
		if i%10 == 9 {
			rcs[i] = kadm.ResourceConfig{Name: rcs[i].Name, Err: kerr.TopicAuthorizationFailed}
		}
	}
	return rcs
}

// configsByName answers every name as kadm's ResourceConfigs.On and the
// entry's own error did: the same configs, the same failures, and
// UnknownTopicOrPartition for a name the answer left out.
func TestConfigsByNameAnswersAsOn(t *testing.T) {
	rcs := describedConfigs(100)
	// A name twice: On takes the first.
	v := "1"
	rcs = append(rcs, kadm.ResourceConfig{Name: "t0", Configs: []kadm.Config{{Key: "max.message.bytes", Value: &v}}})
	byName := configsByName(rcs)
	for _, name := range []string{"t0", "t1", "t9", "t50", "t99", "missing"} {
		want, werr := rcs.On(name, nil)
		if werr == nil {
			werr = want.Err
		}
		got, gerr := byName.of(name)
		if !errors.Is(gerr, werr) || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: error %v, want %v", name, gerr, werr)
		}
		if got.Name != want.Name || len(got.Configs) != len(want.Configs) {
			t.Fatalf("%s: got %+v, want %+v", name, got, want)
		}
		for i := range got.Configs {
			if *got.Configs[i].Value != *want.Configs[i].Value {
				t.Errorf("%s: config %s = %s, want %s", name, got.Configs[i].Key, *got.Configs[i].Value, *want.Configs[i].Value)
			}
		}
	}
	if _, err := byName.of("missing"); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("missing: error %v, want UnknownTopicOrPartition", err)
	}
}

// BenchmarkTopicConfigLookup looks up each of 1,000 topics' configs in one
// DescribeConfigs answer, as a topic refresh does: with kadm's On per
// topic (the baseline) and with configsByName.
func BenchmarkTopicConfigLookup(b *testing.B) {
	rcs := describedConfigs(1000)
	names := make([]string, len(rcs))
	for i, rc := range rcs {
		names[i] = rc.Name
	}
	b.Run("On", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, n := range names {
				if _, err := rcs.On(n, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("byName", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := configsByName(rcs)
			for _, n := range names {
				if _, ok := m[n]; !ok {
					b.Fatal(n)
				}
			}
		}
	})
}
