// Package localhost finds free TCP ports on the loopback interface for
// the processes the harness starts: broker listeners, proxies,
// replicators' metrics endpoints, MirrorMaker 2's REST server.
//
// A port found free can be taken by someone else before its user binds
// it. The ports come from outside the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), so the source port of an
// outgoing connection never takes one: with hundreds of client
// connections opening while a JVM starts, a port from the ephemeral
// range was taken before the broker bound it (CI, "Address already in
// use"), and a stopped broker's port could be taken before its restart.
// Only another picker can still take one, and a collision fails loudly
// (the process cannot listen), never silently.
package localhost

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// The range the ports are picked from when the ephemeral range leaves
// room below it: above the ports services commonly use (Kafka's 9092,
// 8080 and the like), below the kernel's ephemeral ports.
const (
	pickLow  = 20000
	minRange = 1000 // fewer free ports than this and the kernel picks instead
	attempts = 200
)

// ephemeralPath is where Linux keeps its ephemeral port range.
const ephemeralPath = "/proc/sys/net/ipv4/ip_local_port_range"

// pickRange returns the range [lo, hi] to pick ports from, outside the
// ephemeral range eLo–eHi; ok is false when neither side has room.
func pickRange(eLo, eHi int) (lo, hi int, ok bool) {
	if eLo-1-pickLow >= minRange {
		return pickLow, eLo - 1, true
	}
	if 65535-(eHi+1) >= minRange {
		return eHi + 1, 65535, true
	}
	return 0, 0, false
}

// ephemeralRange reads the kernel's ephemeral port range; ok is false
// where it cannot be read (not Linux).
func ephemeralRange() (lo, hi int, ok bool) {
	b, err := os.ReadFile(ephemeralPath)
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo <= 0 || hi < lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// listen opens a listener on a free 127.0.0.1 port outside the ephemeral
// range, or on one the kernel picks where there is no room outside it.
func listen() (net.Listener, error) {
	if eLo, eHi, ok := ephemeralRange(); ok {
		if lo, hi, ok := pickRange(eLo, eHi); ok {
			for range attempts {
				p := lo + rand.IntN(hi-lo+1)
				if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
					return ln, nil
				}
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// FreeAddr returns a 127.0.0.1:port address that was free a moment ago.
func FreeAddr() (string, error) {
	ln, err := listen()
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort returns a 127.0.0.1 port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := listen()
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// FreePorts returns n distinct 127.0.0.1 ports that were free a moment
// ago: every listener stays open until all n are found, so no port is
// returned twice (a broker whose client and controller listeners got the
// same port failed to start).
func FreePorts(n int) ([]int, error) {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := listen()
		if err != nil {
			return nil, fmt.Errorf("find %d free ports: %w", n, err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
