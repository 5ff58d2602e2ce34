package measure

import (
	"math"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// Percentiles returns the distribution points the report keeps of sorted
// latency samples (ms).
func Percentiles(sorted []float64) []report.Percentile {
	if len(sorted) == 0 {
		return nil
	}
	var out []report.Percentile
	for _, p := range []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100} {
		out = append(out, report.Percentile{P: p, Ms: Quantile(sorted, p)})
	}
	return out
}

// Quantile is the nearest-rank percentile p (0..100) of sorted samples.
func Quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted))-1e-9)) - 1 // 1e-9: 99.9% of 1000 is 999, not 999.0000001
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}
