package measure

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSharesSettled(t *testing.T) {
	for _, c := range []struct {
		owned  []float64
		shards int
		want   bool
	}{
		{[]float64{4}, 4, true},
		{[]float64{3}, 4, false},            // one shard unowned
		{[]float64{4, 0, 0}, 4, false},      // the first instance copies alone
		{[]float64{2, 0, 0}, 4, false},      // mid hand-over
		{[]float64{2, 1, 1}, 4, true},       // settled
		{[]float64{1, 1, 1, 1, 0}, 4, true}, // more instances than shards
		{nil, 4, false},
	} {
		if got := sharesSettled(c.owned, c.shards); got != c.want {
			t.Errorf("sharesSettled(%v, %d) = %v, want %v", c.owned, c.shards, got, c.want)
		}
	}
}

// TestWatchSharesNotesTheHandOver serves two instances' reo_shards_owned:
// the first owns all four shards, then two move to the second. The watch
// must say nothing before the move and note it after.
func TestWatchSharesNotesTheHandOver(t *testing.T) {
	var a, b atomic.Int64
	a.Store(4)
	serve := func(v *atomic.Int64) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "# TYPE reo_shards_owned gauge\nreo_shards_owned %d\n", v.Load())
		}))
		t.Cleanup(s.Close)
		return strings.TrimPrefix(s.URL, "http://")
	}
	w := WatchShares(context.Background(), []string{serve(&a), serve(&b)}, 4, 10*time.Millisecond)
	defer w.Stop()
	time.Sleep(100 * time.Millisecond)
	if s := w.Settled(); !s.IsZero() {
		t.Fatalf("settled at %v while one instance owned every shard", s)
	}
	a.Store(2)
	time.Sleep(100 * time.Millisecond)
	if s := w.Settled(); !s.IsZero() {
		t.Fatalf("settled at %v with two shards unowned", s)
	}
	moved := time.Now()
	b.Store(2)
	deadline := time.Now().Add(5 * time.Second)
	for w.Settled().IsZero() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := w.Settled(); s.Before(moved) {
		t.Fatalf("settled at %v, want after the move at %v", s, moved)
	}
}
