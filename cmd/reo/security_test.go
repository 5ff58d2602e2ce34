package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func randomSecret(t *testing.T, prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b[:])
}

// assertNoSecret fails if any secret appears in out.
func assertNoSecret(t *testing.T, what, out string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s contains the secret %q:\n%s", what, s, out)
		}
	}
}

// consumeN reads topic with read_committed until n records arrived, and
// fails after within.
func consumeN(t *testing.T, opts []kgo.Opt, topic string, n int, within time.Duration, stderr *syncBuffer) {
	t.Helper()
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := 0
	deadline := time.Now().Add(within)
	for got < n {
		if time.Now().After(deadline) {
			t.Fatalf("destination topic %s has %d of %d records after %v; reo stderr:\n%s", topic, got, n, within, stderr.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		got += fs.NumRecords()
	}
}

// TestTLSAndSASLInProcess proves the TLS and SASL settings reach the
// clients of both clusters: the source requires mutual TLS and
// SCRAM-SHA-512 (password from REO_SOURCE_SASL_PASSWORD), the destination
// SASL PLAIN (password from a file); records are replicated; neither
// password appears in reo's logs (at debug level) or in --print-config.
// (kfake drops the connection on a wrong password where Kafka answers
// SASL_AUTHENTICATION_FAILED, so the wrong-password case is tested on a real
// broker, in TestSASLSSLRealKafka.)
func TestTLSAndSASLInProcess(t *testing.T) {
	pki := newPKI(t)
	srcPass, dstPass := randomSecret(t, "src-pw-"), randomSecret(t, "dst-pw-")
	src := fakeCluster(t, "src", kfake.SeedTopics(2, "in"),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{pki.ServerCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.CAPool, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "reo", srcPass))
	dst := fakeCluster(t, "dst", kfake.EnableSASL(), kfake.Superuser("PLAIN", "reo-dst", dstPass))

	clientCert, err := tls.LoadX509KeyPair(pki.ClientCertFile, pki.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	srcOpts := []kgo.Opt{kgo.SeedBrokers(src.ListenAddrs()...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: pki.CAPool, Certificates: []tls.Certificate{clientCert}, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: "reo", Pass: srcPass}.AsSha512Mechanism())}
	dstOpts := []kgo.Opt{kgo.SeedBrokers(dst.ListenAddrs()...), kgo.SASL(plain.Auth{User: "reo-dst", Pass: dstPass}.AsMechanism())}
	prod, err := kgo.NewClient(srcOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 20 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte(fmt.Sprint("v", i))}).FirstErr(); err != nil {
			t.Fatalf("produce to the TLS+SASL source: %v", err)
		}
	}

	pwFile := filepath.Join(t.TempDir(), "dest-password")
	if err := os.WriteFile(pwFile, []byte(dstPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"replicate", "--shards", "2", "--log-level", "debug",
		"--source-tls-ca", pki.CAFile, "--source-tls-cert", pki.ClientCertFile, "--source-tls-key", pki.ClientKeyFile,
		"--source-sasl-mechanism", "SCRAM-SHA-512", "--source-sasl-username", "reo",
		"--dest-sasl-mechanism", "plain", "--dest-sasl-username", "reo-dst", "--dest-sasl-password-file", pwFile}
	env := func(srcPassword string) []string {
		return []string{
			envSourceBootstrap + "=" + strings.Join(src.ListenAddrs(), ","), envSourceTopic + "=in",
			envDestBootstrap + "=" + strings.Join(dst.ListenAddrs(), ","), envDestTopic + "=out",
			"REO_SOURCE_SASL_PASSWORD=" + srcPassword, "REO_SESSION_TIMEOUT=6s",
		}
	}

	var printed bytes.Buffer
	if code := run(context.Background(), append(args, "--print-config"), env(srcPass), &printed, io.Discard); code != 0 {
		t.Fatalf("--print-config exit code %d", code)
	}
	assertNoSecret(t, "--print-config output", printed.String(), srcPass, dstPass)
	if !strings.Contains(printed.String(), "REO_SOURCE_SASL_PASSWORD is set") {
		t.Errorf("--print-config does not say the source password is set:\n%s", printed.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, env(srcPass), &stdout, &stderr) }()
	consumeN(t, dstOpts, "out", 20, 30*time.Second, &stderr)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after a graceful stop, want 0; stderr:\n%s", code, stderr.String())
	}
	assertNoSecret(t, "reo's output", stdout.String()+stderr.String(), srcPass, dstPass)
	if !strings.Contains(stderr.String(), "SASL PLAIN without TLS") {
		t.Errorf("no warning that the destination's PLAIN password travels in clear text:\n%s", stderr.String())
	}
}
