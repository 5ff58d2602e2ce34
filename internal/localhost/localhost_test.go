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
