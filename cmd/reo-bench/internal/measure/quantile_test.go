package measure

import "testing"

// TestQuantile proves the nearest-rank percentiles the latency figures use.
func TestQuantile(t *testing.T) {
	var s []float64
	for i := 1; i <= 1000; i++ {
		s = append(s, float64(i))
	}
	for _, c := range []struct{ p, want float64 }{{50, 500}, {99, 990}, {99.9, 999}, {100, 1000}, {0, 1}} {
		if got := Quantile(s, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Quantile(nil, 50); got != 0 {
		t.Errorf("quantile of nothing = %v", got)
	}
}
