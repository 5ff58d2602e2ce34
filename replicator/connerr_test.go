package replicator

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestConnectionCauseNamed proves that a source that cannot be spoken to
// is reported with its cause and the likely misconfiguration, not only
// "context deadline exceeded": TLS against a plaintext listener, and a
// bootstrap address that is not Kafka (a server that answers garbage).
func TestConnectionCauseNamed(t *testing.T) {
	dst := newCluster(t, "dst", 1)
	plain := newCluster(t, "plain", 1)

	garbage, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { garbage.Close() })
	go func() {
		for {
			c, err := garbage.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				_, _ = c.Read(buf)
				_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			}()
		}
	}()

	for _, tc := range []struct {
		name    string
		brokers []string
		opts    []kgo.Opt
		want    string
	}{
		{"tls-to-plaintext", plain.ListenAddrs(), []kgo.Opt{kgo.DialTLSConfig(&tls.Config{InsecureSkipVerify: true})}, "speak plaintext"},
		{"not-kafka", []string{garbage.Addr().String()}, nil, "not Kafka's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(plain, dst, "x")
			cfg.SourceBrokers, cfg.SourceOpts = tc.brokers, tc.opts
			var logs lockedBuffer
			r, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			waitFor(t, 35*time.Second, func() string {
				if strings.Contains(logs.String(), tc.want) {
					return ""
				}
				return "no warning names the cause yet; log:\n" + logs.String()
			})
			cancel()
			<-done
		})
	}
}
