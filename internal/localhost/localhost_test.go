package localhost_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/reo-kafka/reo/internal/localhost"
)

// TestFreePortsCanBeBound proves the port and the address returned are on
// 127.0.0.1 and can be listened on right away.
func TestFreePortsCanBeBound(t *testing.T) {
	port, err := localhost.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr, err := localhost.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("FreeAddr = %q, want 127.0.0.1:port", addr)
	}
	for _, a := range []string{"127.0.0.1:" + strconv.Itoa(port), addr} {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("listen on %s: %v", a, err)
		}
		ln.Close()
	}
}

// FreePorts never returns one port twice, however many are asked for.
func TestFreePortsDistinct(t *testing.T) {
	for range 20 {
		ports, err := localhost.FreePorts(9)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, p := range ports {
			if p <= 0 || seen[p] {
				t.Fatalf("ports %v: %d is invalid or repeated", ports, p)
			}
			seen[p] = true
		}
	}
}

// The ports come from outside the kernel's ephemeral range, where the
// source port of an outgoing connection could take one before its
// listener binds it.
func TestFreePortsOutsideEphemeralRange(t *testing.T) {
	eLo, eHi, ok := localhost.EphemeralRange()
	if !ok {
		t.Skip("no ephemeral port range to read on this system")
	}
	if _, _, room := localhost.PickRange(eLo, eHi); !room {
		t.Skipf("ephemeral range %d-%d leaves no room outside it", eLo, eHi)
	}
	ports, err := localhost.FreePorts(50)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		p, err := localhost.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
	}
	for _, p := range ports {
		if p >= eLo && p <= eHi {
			t.Fatalf("port %d is in the ephemeral range %d-%d", p, eLo, eHi)
		}
	}
}

func TestPickRange(t *testing.T) {
	for _, c := range []struct {
		eLo, eHi, lo, hi int
		ok               bool
	}{
		{32768, 60999, 20000, 32767, true}, // Linux's default: below
		{1024, 60999, 61000, 65535, true},  // no room below: above
		{1024, 65000, 0, 0, false},         // no room either side
		{21000, 65535, 0, 0, false},        // 1,000 below is too few
	} {
		lo, hi, ok := localhost.PickRange(c.eLo, c.eHi)
		if lo != c.lo || hi != c.hi || ok != c.ok {
			t.Errorf("PickRange(%d, %d) = %d, %d, %v; want %d, %d, %v", c.eLo, c.eHi, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}
