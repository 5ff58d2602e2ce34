package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// describeDir says where the local brokers keep their files: dir ("" is
// the system temp dir) and the filesystem it is on, with its mount
// options, which can decide a run (reports/bench-cost: ext4 against tmpfs
// at 5,000 partitions).
func describeDir(dir string) string {
	if dir == "" {
		dir = os.TempDir()
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
	}
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return fmt.Sprintf("%s (filesystem unknown: %v)", dir, err)
	}
	point, fstype, opts, ok := mountOf(abs, string(mounts))
	if !ok {
		return fmt.Sprintf("%s (filesystem unknown: no mount in /proc/mounts)", dir)
	}
	return fmt.Sprintf("%s, on %s mounted at %s (%s)", dir, fstype, point, opts)
}

// mountOf finds, in the text of /proc/mounts, the mount that holds the
// absolute path abs: the one with the longest mount point that is abs or
// a parent of it (the last such line, as later mounts hide earlier ones).
func mountOf(abs, mounts string) (point, fstype, opts string, ok bool) {
	for _, line := range strings.Split(mounts, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		mp := unescapeMount(f[1])
		if !(abs == mp || mp == "/" || strings.HasPrefix(abs, mp+"/")) {
			continue
		}
		if !ok || len(mp) >= len(point) {
			point, fstype, opts, ok = mp, f[2], f[3], true
		}
	}
	return point, fstype, opts, ok
}

// unescapeMount undoes /proc/mounts' octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if c, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(c))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
