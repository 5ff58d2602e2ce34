package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteLatencySamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latency-samples", "w-reo-r2.csv")
	in := []latencySample{{At: 0, Unix: 1796274371000, Ms: 12.5}, {At: 1500 * time.Millisecond, Unix: 1796274372500, Ms: 68.0004}, {At: 20*time.Second + 999*time.Microsecond, Unix: 1796274391000, Ms: 3}}
	if err := writeLatencySamples(path, in); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "source_ms,latency_ms,source_unix_ms\n0,12.500,1796274371000\n1500,68.000,1796274372500\n20000,3.000,1796274391000\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
