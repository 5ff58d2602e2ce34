package replicator

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// connTrouble remembers the last connection-level error a client saw (a
// failed dial or TLS handshake, a connection closed or answered with
// garbage). kgo retries those inside a request until its context ends, so
// the request's own error is only "context deadline exceeded"; this is the
// cause an operator needs. mu guards last.
type connTrouble struct {
	mu   sync.Mutex
	last error
}

var (
	_ kgo.HookBrokerConnect = (*connTrouble)(nil)
	_ kgo.HookBrokerE2E     = (*connTrouble)(nil)
)

func (c *connTrouble) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		c.set(err)
	}
}

func (c *connTrouble) OnBrokerE2E(_ kgo.BrokerMetadata, _ int16, e kgo.BrokerE2E) {
	if err := e.Err(); err != nil {
		c.set(err)
	}
}

func (c *connTrouble) set(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = err
}

// take returns and clears the last error.
func (c *connTrouble) take() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.last
	c.last = nil
	return err
}

// explainConn adds to a failed connection attempt the last connection
// error seen and, where the error says so, the likely misconfiguration.
func explainConn(err, last error, tlsOn bool) error {
	if last == nil {
		return err
	}
	hint := ""
	msg := last.Error()
	switch {
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		hint = "TLS is on but the listener speaks plaintext: turn TLS off for this cluster, or use its TLS port"
	case tlsOn && strings.Contains(msg, "unable to dial") && (errors.Is(last, io.EOF) || strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "EOF") || strings.Contains(msg, "reset")):
		hint = "the TLS handshake did not complete: does the listener speak plaintext? turn TLS off for this cluster, or use its TLS port"
	case strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:"):
		hint = "the TLS handshake failed: check the CA, the certificate and the server name"
	case strings.Contains(msg, "invalid large response size") || strings.Contains(msg, "malformed") || strings.Contains(msg, "unexpected"):
		hint = "the server's answer is not Kafka's: is this a Kafka bootstrap address?"
	case !tlsOn && (errors.Is(last, io.EOF) || strings.Contains(msg, "connection reset")):
		hint = "the server closed the connection: a TLS or SASL listener reached without TLS/SASL settings, or not a Kafka broker?"
	case strings.Contains(msg, "SASL") || strings.Contains(msg, "sasl"):
		hint = "SASL failed: check the mechanism and credentials"
	}
	if hint != "" {
		return &explained{err: err, last: last, hint: hint}
	}
	return &explained{err: err, last: last}
}

type explained struct {
	err, last error
	hint      string
}

func (e *explained) Error() string {
	s := e.err.Error() + " (last connection error: " + e.last.Error()
	if e.hint != "" {
		s += "; " + e.hint
	}
	return s + ")"
}

func (e *explained) Unwrap() []error { return []error{e.err, e.last} }

// hasTLS reports whether opts configure TLS (kgo.DialTLSConfig or
// kgo.DialTLS). Options are opaque; the dial setting is read through a
// client config, which NewClient validates without connecting.
func hasTLS(opts []kgo.Opt) bool {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, opts...)...)
	if err != nil {
		return false
	}
	defer cl.Close()
	c, _ := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
	return c != nil
}
