package bench

import (
	"strings"
	"testing"
)

func TestMountOf(t *testing.T) {
	const mounts = `/dev/vda / ext4 rw,relatime,discard 0 0
proc /proc proc rw,nosuid 0 0
tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0
tmpfs /data tmpfs rw 0 0
/dev/vdb /data xfs rw,noatime 0 0
/dev/vdc /data2 ext4 rw 0 0
/dev/vdd /mnt/with\040space xfs rw 0 0
`
	for _, c := range []struct {
		path, point, fstype, opts string
	}{
		{"/tmp", "/", "ext4", "rw,relatime,discard"},
		{"/dev/shm/x", "/dev/shm", "tmpfs", "rw,nosuid,nodev"},
		{"/dev/shm", "/dev/shm", "tmpfs", "rw,nosuid,nodev"},
		{"/data/kafka", "/data", "xfs", "rw,noatime"}, // the later mount hides the earlier
		{"/data2/kafka", "/data2", "ext4", "rw"},
		{"/data22", "/", "ext4", "rw,relatime,discard"}, // not under /data2
		{"/mnt/with space/k", "/mnt/with space", "xfs", "rw"},
	} {
		point, fstype, opts, ok := mountOf(c.path, mounts)
		if !ok || point != c.point || fstype != c.fstype || opts != c.opts {
			t.Errorf("mountOf(%s) = %q %q %q %v, want %q %q %q", c.path, point, fstype, opts, ok, c.point, c.fstype, c.opts)
		}
	}
	if _, _, _, ok := mountOf("/x", "garbage\n"); ok {
		t.Error("a path found in a mounts text without mounts")
	}
	// The machine's own: /proc is proc wherever /proc/mounts exists.
	if d := describeDir("/proc"); !strings.Contains(d, "on proc mounted at /proc") {
		t.Errorf("describeDir(/proc) = %q, want it on proc", d)
	}
}
