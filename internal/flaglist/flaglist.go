// Package flaglist reads the comma-separated lists and the byte counts
// reo's commands take as flags and environment variables
// (--source-bootstrap, --systems, --max-inflight-bytes, ...).
package flaglist

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Split returns the items of a comma-separated list, each trimmed of
// spaces, empty items dropped: "a, b,,c " is [a b c], "" is none.
func Split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// Size parses a byte count: a number with an optional suffix B, KB,
// MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), any case.
func Size(v string) (int64, error) {
	s := strings.TrimSpace(v)
	units := []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"b", 1}}
	mult := int64(1)
	lower := strings.ToLower(s)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mult, s = u.mult, strings.TrimSpace(s[:len(s)-len(u.suffix)])
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size like 512MiB, 1GiB or 1000000", v)
	}
	return n * mult, nil
}
