package measure

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// GCPause is one stop-the-world pause of a broker JVM.
type GCPause struct {
	Start, End time.Time
}

// gcPauseLine matches a pause in a JVM's -Xlog:gc log with the utctime
// decoration: "[2026-12-03T05:22:03.805+0000] GC(0) Pause Young
// (Allocation Failure) 8M->2M(30M) 12.671ms". The time is when the line
// was written: the pause's end.
var gcPauseLine = regexp.MustCompile(`^\[([0-9T:.+-]+)\] GC\(\d+\) Pause .* ([0-9.]+)ms$`)

// ParseGCLog returns the pauses of a -Xlog:gc log written with the
// utctime decoration, in the log's order; other lines (the collector's
// name, concurrent phases) are skipped.
func ParseGCLog(r io.Reader) ([]GCPause, error) {
	var out []GCPause
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		m := gcPauseLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		end, err := time.Parse("2006-01-02T15:04:05.000-0700", m[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: time %q: %w", n, m[1], err)
		}
		ms, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: pause %q: %w", n, m[2], err)
		}
		out = append(out, GCPause{Start: end.Add(-time.Duration(ms * float64(time.Millisecond))), End: end})
	}
	return out, sc.Err()
}

// ErrNoGCLogs: the cluster's brokers keep no GC log (not a local cluster,
// or one started before they did).
var ErrNoGCLogs = errors.New("no broker GC logs")

// ReadGCPauses returns the pauses logged by every broker JVM of the local
// cluster rooted at root (broker-*/gc-*.log), sorted by start; ErrNoGCLogs
// when there is no such log.
func ReadGCPauses(root string) ([]GCPause, error) {
	files, err := filepath.Glob(filepath.Join(root, "broker-*", "gc-*.log"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: %w", root, ErrNoGCLogs)
	}
	var out []GCPause
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		ps, err := ParseGCLog(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, ps...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, nil
}

// PausesIn returns the pauses of sorted that started in [from, to).
func PausesIn(sorted []GCPause, from, to time.Time) []GCPause {
	i := sort.Search(len(sorted), func(i int) bool { return !sorted[i].Start.Before(from) })
	j := sort.Search(len(sorted), func(i int) bool { return !sorted[i].Start.Before(to) })
	return sorted[i:j]
}

// Overlaps reports whether any pause of sorted overlaps [from, to]. Pauses
// that started more than maxPause before from are not looked at.
func Overlaps(sorted []GCPause, from, to time.Time) bool {
	j := sort.Search(len(sorted), func(i int) bool { return sorted[i].Start.After(to) })
	for i := j - 1; i >= 0 && !sorted[i].Start.Before(from.Add(-maxPause)); i-- {
		if !sorted[i].End.Before(from) {
			return true
		}
	}
	return false
}

// maxPause bounds the pauses Overlaps considers: a broker paused for
// longer would have left the cluster.
const maxPause = time.Minute
