// Package localhost finds free TCP ports on the loopback interface for
// the processes the harness starts: broker listeners, proxies,
// replicators' metrics endpoints, MirrorMaker 2's REST server.
//
// A port found free can be taken by someone else before its user binds
// it; the callers bind within moments, and a collision fails loudly (the
// process cannot listen), never silently.
package localhost

import (
	"fmt"
	"net"
)

// FreeAddr returns a 127.0.0.1:port address that was free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort returns a 127.0.0.1 port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// FreePorts returns n distinct 127.0.0.1 ports that were free a moment
// ago: every listener stays open until all n are found, so the kernel
// cannot hand out one port twice (a broker whose client and controller
// listeners got the same port failed to start).
func FreePorts(n int) ([]int, error) {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find %d free ports: %w", n, err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
