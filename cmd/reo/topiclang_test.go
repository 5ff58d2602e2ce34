package main

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestTopicDFAMatchesRegexp proves the topic-name automata accept exactly
// what Go's regexp matches whole, for expressions of the kinds MirrorMaker
// 2 files use (alternations, classes, repetition, anchors, case folding,
// the cycle rule and internal-topic exclusions), on 3,000 random topic
// names each; and that selection (include minus exclude), withPrefix and
// intersect compose as sets do, with shortest giving the shortest member.
func TestTopicDFAMatchesRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	frags := []string{"a", "b", "orders", ".", "-", "_", "x1", "B", "B.", "internal", "mm2", "checkpoints", "Z9"}
	name := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(frags[rng.IntN(len(frags))])
		}
		return b.String()
	}
	exprs := []string{".*", "orders|payments\\..*", "[a-c]+-?x\\d", "(?i)ORDERS.*", "^a.*b$", "a{2,3}", "(?:.*\\.)?B\\..*",
		`__.*|\..*|mm2.*\.internal|.*\.checkpoints\.internal`, "x1|", "b*(a|-)+_?", "[^.]*"}
	for _, e := range exprs {
		d, err := compileTopicDFA(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		re := regexp.MustCompile("^(?:" + e + ")$")
		for range 3000 {
			s := name()
			if got, want := d.accepts(s), re.MatchString(s); got != want {
				t.Fatalf("%s on %q: automaton %v, regexp %v", e, s, got, want)
			}
		}
	}
	sel, err := selection("orders.*", "orders-tmp.*")
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := sel.shortest(); !ok || w != "orders" {
		t.Errorf("shortest of orders.* minus orders-tmp.* = %q %v, want orders", w, ok)
	}
	pre, err := withPrefix("east.", sel)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{"east.orders": true, "east.orders-tmp1": false, "orders": false, "east.ordersx": true, "west.orders": false} {
		if pre.accepts(s) != want {
			t.Errorf("east. + (orders.* minus orders-tmp.*) accepts %q: %v, want %v", s, !want, want)
		}
	}
	other, _ := selection("east\\.o.*s", "")
	both, err := intersect(pre, other)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := both.shortest(); !ok || w != "east.orders" {
		t.Errorf("shortest of the intersection = %q %v, want east.orders", w, ok)
	}
	none, _ := selection("a+", "a+")
	if w, ok := none.shortest(); ok {
		t.Errorf("a+ minus a+ has member %q", w)
	}
	if _, err := compileTopicDFA(`\bx`); err == nil {
		t.Errorf(`\b accepted; the analysis cannot follow it`)
	}
}

// accepts runs d on s; a character outside topic names rejects.
func (d *dfa) accepts(s string) bool {
	st := int32(0)
	for i := 0; i < len(s); i++ {
		si := symIndex[s[i]]
		if si < 0 {
			return false
		}
		st = d.next[st][si]
	}
	return d.accept[st]
}
