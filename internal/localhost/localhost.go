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
