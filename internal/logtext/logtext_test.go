package logtext_test

import (
	"testing"

	"github.com/reo-kafka/reo/internal/logtext"
)

// TestTail proves Tail keeps the last n lines, ignores a trailing newline
// and returns short input whole.
func TestTail(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := logtext.Tail(tc.in, tc.n); got != tc.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestHead proves Head keeps the first n lines, ignores a trailing newline
// and returns short input whole.
func TestHead(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "a\nb"},
		{"a\nb\nc", 1, "a"},
		{"a\nb\n", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := logtext.Head(tc.in, tc.n); got != tc.want {
			t.Errorf("Head(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
