package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSaveProfiles proves --reo-pprof keeps a profile of every instance
// under a name of its own: each address's CPU profile (over the asked
// seconds), goroutines and heap land in <name>-i<n>-<kind>.pprof with that
// instance's own bytes, so two instances, or two repetitions, no longer
// write over each other; an instance whose endpoint fails is logged by
// name and the others are still saved.
func TestSaveProfiles(t *testing.T) {
	pprof := func(id string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/debug/pprof/":
				fmt.Fprint(w, "index")
			case "/debug/pprof/profile":
				fmt.Fprintf(w, "%s cpu seconds=%s", id, r.URL.Query().Get("seconds"))
			case "/debug/pprof/goroutine", "/debug/pprof/heap":
				fmt.Fprintf(w, "%s %s", id, strings.TrimPrefix(r.URL.Path, "/debug/pprof/"))
			default:
				http.NotFound(w, r)
			}
		}))
	}
	a, b := pprof("a"), pprof("b")
	defer a.Close()
	defer b.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/debug/pprof/" {
			fmt.Fprint(w, "index")
			return
		}
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer broken.Close()
	addr := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

	dir := t.TempDir()
	var mu sync.Mutex
	var logged []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	done := saveProfiles(context.Background(), dir, []string{addr(a), addr(b), addr(broken)}, "1KiB-p12-i3-reo-saturation-r2", 3, logf)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("saveProfiles did not finish")
	}
	for file, want := range map[string]string{
		"1KiB-p12-i3-reo-saturation-r2-i1-cpu.pprof":       "a cpu seconds=3",
		"1KiB-p12-i3-reo-saturation-r2-i1-goroutine.pprof": "a goroutine",
		"1KiB-p12-i3-reo-saturation-r2-i1-heap.pprof":      "a heap",
		"1KiB-p12-i3-reo-saturation-r2-i2-cpu.pprof":       "b cpu seconds=3",
		"1KiB-p12-i3-reo-saturation-r2-i2-heap.pprof":      "b heap",
	} {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", file, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "1KiB-p12-i3-reo-saturation-r2-i3-cpu.pprof")); err == nil {
		t.Error("the failing instance left a cpu profile")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 3 || !strings.Contains(strings.Join(logged, "\n"), "cpu profile 1KiB-p12-i3-reo-saturation-r2-i3-cpu.pprof") {
		t.Errorf("logged %q; want the failing instance's three profiles named", logged)
	}
}
