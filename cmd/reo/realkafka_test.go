package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startSecureKafka starts a one-broker real Kafka cluster with an extra
// SASL_SSL listener named SECURE on 127.0.0.1, using the PKI's server
// certificate, SCRAM-SHA-256/512 users from the metadata log and the PLAIN
// users given. It returns the cluster and the SECURE listener's address.
//
// The cluster package picks the broker's ports when it starts it, and
// KRaft cannot add a listener at run time, so the broker is started once,
// its listeners are read back from its server.properties, and it is
// restarted with SECURE added.
func startSecureKafka(ctx context.Context, t *testing.T, pki *testPKI, plainUsers map[string]string) (cluster.Cluster, string) {
	t.Helper()
	cluster.Need(ctx, t, cluster.Local)
	var jaas strings.Builder
	jaas.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
	for u, p := range plainUsers {
		fmt.Fprintf(&jaas, " user_%s=%q", u, p)
	}
	jaas.WriteString(";")
	scram := "org.apache.kafka.common.security.scram.ScramLoginModule required;"
	props := map[string]string{
		"listener.name.secure.sasl.enabled.mechanisms":        "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
		"listener.name.secure.scram-sha-512.sasl.jaas.config": scram,
		"listener.name.secure.scram-sha-256.sasl.jaas.config": scram,
		"listener.name.secure.plain.sasl.jaas.config":         jaas.String(),
		"listener.name.secure.ssl.keystore.type":              "PEM",
		"listener.name.secure.ssl.keystore.location":          pki.ServerKeystore,
	}
	var c cluster.Cluster
	var err error
	for range 3 {
		c, err = cluster.Start(ctx, cluster.Local, cluster.Spec{Name: "sasl", Brokers: 1, Props: props})
		// cluster.newClusterID can draw an id starting with '-', which
		// kafka-storage format reads as an option (1 start in 64);
		// reported to the cluster package's owner. Try again.
		if err == nil || !strings.Contains(err.Error(), "--cluster-id/-t: expected one argument") {
			break
		}
		t.Logf("start local Kafka: cluster id began with '-', retrying")
	}
	if errors.Is(err, cluster.ErrUnavailable) {
		t.Skipf("local Kafka cannot run here: %v", err)
	}
	if err != nil {
		t.Fatalf("start local Kafka: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	rooted, ok := c.(interface{ Root() string })
	bc, ok2 := c.(cluster.BrokerControl)
	if !ok || !ok2 {
		t.Fatalf("local cluster %T has no Root or BrokerControl", c)
	}
	path := filepath.Join(rooted.Root(), "broker-1", "server.properties")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read broker config: %v", err)
	}
	conf := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			conf[k] = v
		}
	}
	secure := freeAddr(t)
	extra := fmt.Sprintf("listeners=%s,SECURE://%s\nadvertised.listeners=%s,SECURE://%s\nlistener.security.protocol.map=%s,SECURE:SASL_SSL\n",
		conf["listeners"], secure, conf["advertised.listeners"], secure, conf["listener.security.protocol.map"])
	if err := bc.KillBroker(ctx, 1); err != nil {
		t.Fatalf("stop broker to add the SECURE listener: %v", err)
	}
	// java.util.Properties keeps the last value of a repeated key.
	if err := os.WriteFile(path, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := bc.StartBroker(ctx, 1); err != nil {
		t.Fatalf("restart broker with the SECURE listener: %v", err)
	}
	return c, secure
}

// TestSASLSSLRealKafka proves, against a real Kafka 4.4 broker with a
// SASL_SSL listener and certificates made by the test, that reo replicates
// with TLS (CA file) and SCRAM-SHA-512 to the source and TLS and SASL PLAIN
// (password file) to the destination (the same broker, another topic); and
// that a wrong source password stops reo with exit code 1 and an
// authentication error naming the source cluster. No password ever
// appears in reo's output.
func TestSASLSSLRealKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kafka broker JVM")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	pki := newPKI(t)
	srcPass, dstPass := randomSecret(t, "src-pw-"), randomSecret(t, "dst-pw-")
	c, secure := startSecureKafka(ctx, t, pki, map[string]string{"reodst": dstPass})
	t.Logf("broker with SASL_SSL listener %s up after %v", secure, time.Since(began).Round(time.Millisecond))
	plainOpts := cluster.DirectOpts(c) // the PLAINTEXT listener, for setup and checks

	admCl, err := kgo.NewClient(plainOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	res, err := kadm.NewClient(admCl).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "reosrc", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: srcPass}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("create SCRAM user: %v", err)
	}
	if err := kafkatest.CreateTopic(ctx, plainOpts, "in", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	rs := make([]*kgo.Record, 50)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: "in", Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprint("v", i))}
	}
	if err := admCl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	pwFile := filepath.Join(t.TempDir(), "dest-password")
	if err := os.WriteFile(pwFile, []byte(dstPass), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"replicate", "--shards", "2", "--log-level", "debug",
		"--source-bootstrap", secure, "--source-topic", "in",
		"--dest-bootstrap", secure, "--dest-topic", "out",
		"--source-tls-ca", pki.CAFile, "--source-sasl-mechanism", "SCRAM-SHA-512", "--source-sasl-username", "reosrc",
		"--dest-tls-ca", pki.CAFile, "--dest-sasl-mechanism", "PLAIN", "--dest-sasl-username", "reodst", "--dest-sasl-password-file", pwFile,
		"--session-timeout", "6s", "--replication-factor", "1"}

	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(rctx, args, []string{"REO_SOURCE_SASL_PASSWORD=" + srcPass}, &stdout, &stderr) }()
	consumeN(t, plainOpts, "out", 50, 40*time.Second, &stderr)
	rcancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after a graceful stop, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("reo did not stop within 10s")
	}
	assertNoSecret(t, "reo's output", stdout.String()+stderr.String(), srcPass, dstPass)

	wrong := randomSecret(t, "wrong-pw-")
	var wout, werr syncBuffer
	wdone := make(chan int, 1)
	go func() { wdone <- run(ctx, args, []string{"REO_SOURCE_SASL_PASSWORD=" + wrong}, &wout, &werr) }()
	select {
	case code := <-wdone:
		if code != 1 {
			t.Errorf("wrong password: exit code %d, want 1; stderr:\n%s", code, werr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("wrong password: reo still running after 30s instead of stopping; stderr:\n%s", werr.String())
	}
	out := wout.String() + werr.String()
	assertNoSecret(t, "reo's output with a wrong password", out, wrong, srcPass, dstPass)
	if !strings.Contains(out, "source cluster refused") || !strings.Contains(out, "SASL_AUTHENTICATION_FAILED") {
		t.Errorf("wrong password: the error does not name the source cluster and the SASL failure:\n%s", out)
	}
	for _, line := range strings.Split(werr.String(), "\n") {
		if strings.HasPrefix(line, "reo: ") {
			t.Logf("wrong password: %s", line)
		}
	}
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}
