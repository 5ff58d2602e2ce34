package flaglist

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"":            nil,
		" , ,":        nil,
		"reo":         {"reo"},
		"a, b,,c ":    {"a", "b", "c"},
		"mm2,mm2-eos": {"mm2", "mm2-eos"},
	} {
		if got := Split(in); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1000": 1000, "2KiB": 2048, "3 MB": 3e6, "1gib": 1 << 30, "64MiB": 64 << 20, "7b": 7} {
		if got, err := Size(in); err != nil || got != want {
			t.Errorf("Size(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1", "1.5GiB", "9223372036854775807KiB", "MiB"} {
		if n, err := Size(bad); err == nil {
			t.Errorf("Size(%q) = %d, want an error", bad, n)
		}
	}
}
