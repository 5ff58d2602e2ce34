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
