package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// latencySample is one record of a latency run's measured window: when
// the source stamped it, counted from the window's start, and how long
// after that the destination showed it.
type latencySample struct {
	At   time.Duration
	Unix int64 // the source timestamp, Unix ms: to line a tail up with other logs
	Ms   float64
}

// writeLatencySamples writes samples as CSV (header
// "source_ms,latency_ms,source_unix_ms")
// to path, creating its directory.
func writeLatencySamples(path string, samples []latencySample) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "source_ms,latency_ms,source_unix_ms")
	for _, s := range samples {
		fmt.Fprintf(w, "%d,%.3f,%d\n", s.At.Milliseconds(), s.Ms, s.Unix)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
