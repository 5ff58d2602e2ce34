package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
)

// jdkStores makes the client's trust and key stores with the JDK's keytool
// (and openssl for the key pair), as MirrorMaker 2 users make theirs:
// truststores of the test CA in JKS and PKCS12, keystores of the client
// certificate in PKCS12 (openssl) and JKS (keytool, with its own key
// password). Without the tools it falls back to stores made in Go.
func jdkStores(t *testing.T, pki *testPKI) *testStores {
	t.Helper()
	s := makeStores(t, pki)
	kt, err1 := exec.LookPath("keytool")
	ossl, err2 := exec.LookPath("openssl")
	if err1 != nil || err2 != nil {
		t.Logf("keytool or openssl missing, stores made in Go: %v %v", err1, err2)
		return s
	}
	dir := t.TempDir()
	runTool := func(name string, args ...string) {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
	}
	for _, typ := range []string{"JKS", "PKCS12"} {
		p := filepath.Join(dir, "trust."+strings.ToLower(typ))
		runTool(kt, "-importcert", "-noprompt", "-alias", "ca", "-file", pki.CAFile, "-keystore", p, "-storepass", storePass, "-storetype", typ)
		s.trust[typ] = p
	}
	p12 := filepath.Join(dir, "key.p12")
	runTool(ossl, "pkcs12", "-export", "-in", pki.ClientCertFile, "-inkey", pki.ClientKeyFile, "-certfile", pki.CAFile, "-name", "reo", "-out", p12, "-passout", "pass:"+storePass)
	s.key["PKCS12"] = p12
	jks := filepath.Join(dir, "key.jks")
	runTool(kt, "-importkeystore", "-noprompt", "-srckeystore", p12, "-srcstoretype", "PKCS12", "-srcstorepass", storePass,
		"-destkeystore", jks, "-deststoretype", "JKS", "-deststorepass", storePass, "-destkeypass", keyPass)
	s.key["JKS"] = jks
	return s
}

// startSecureClusters starts one-broker local clusters with a SECURE
// listener each, in parallel; they are closed at the end of the test.
func startSecureClusters(ctx context.Context, t *testing.T, specs map[string]cluster.SecureListener) map[string]*cluster.SecureCluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Kafka broker JVMs")
	}
	cluster.Need(ctx, t, cluster.Local)
	type started struct {
		name string
		c    *cluster.SecureCluster
		err  error
	}
	ch := make(chan started, len(specs))
	for name, sec := range specs {
		go func() {
			c, err := cluster.StartSecureLocal(ctx, cluster.Spec{Name: name, Brokers: 1}, sec)
			ch <- started{name, c, err}
		}()
	}
	out := map[string]*cluster.SecureCluster{}
	var firstErr error
	for range specs {
		s := <-ch
		if s.err != nil {
			firstErr = cmpOrErr(firstErr, fmt.Errorf("start secure local cluster %s: %w", s.name, s.err))
			continue
		}
		t.Cleanup(func() { s.c.Close() })
		out[s.name] = s.c
	}
	if errors.Is(firstErr, cluster.ErrUnavailable) {
		t.Skipf("local Kafka cannot run here: %v", firstErr)
	}
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return out
}

func cmpOrErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// issueFixtureFor is the issue's file as its users wrote it, with the
// hosts replaced by the test's brokers and a truststore for the test CA
// added per cluster, and with what reo's errors on it ask for done (the
// trailing comments on lines of their own, the policy class's package
// corrected, the flow enabled): TestMM2IssueFixture shows reo refusing
// the file before these fixes.
func issueFixtureFor(t *testing.T, c1, c2 *cluster.SecureCluster, extra ...string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/mm2-issue12.properties")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range []struct{ old, new string }{
		{"cluster1-broker1:9092,cluster1-broker2:9092,cluster1-broker3:9092", strings.Join(c1.SecureBootstrap(), ",")},
		{"cluster2-broker1:9092,cluster2-broker2:9092,cluster2-broker3:9092", strings.Join(c2.SecureBootstrap(), ",")},
		{"topics = .* # Replicate all topics", "# Replicate all topics\ntopics = .*"},
		{"groups = .*  # Replicate all consumer groups", "# Replicate all consumer groups\ngroups = .*"},
		{"mirror.replication.DefaultReplicationPolicy", "mirror.DefaultReplicationPolicy"},
	} {
		if !strings.Contains(s, r.old) {
			t.Fatalf("the fixture no longer holds %q", r.old)
		}
		s = strings.Replace(s, r.old, r.new, 1)
	}
	s += "cluster1->cluster2.enabled = true\n" + strings.Join(extra, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "connect-mirror-maker.properties")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMM2FixtureSASLSSLRealKafka proves the issue's MirrorMaker 2 file
// (hosts replaced, a truststore for the test's CA added, the fixes reo's
// errors ask for applied) drives reo against two real Kafka 4.4 brokers
// whose listeners speak SASL_SSL with PLAIN, the file's users and
// passwords: cluster1's topic is copied to cluster2 as cluster1.orders,
// exactly once (oracle, read_committed, an aborted transaction on the
// source), with truststores made by the JDK's keytool (JKS for cluster1,
// PKCS12 for cluster2); no password appears in reo's output. With a
// wrong cluster1 password reo stops with exit code 1 and an error naming
// the flow and the SASL failure.
func TestMM2FixtureSASLSSLRealKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka broker JVMs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	pki := newPKI(t)
	stores := jdkStores(t, pki)
	cs := startSecureClusters(ctx, t, map[string]cluster.SecureListener{
		"cluster1": {Protocol: "SASL_SSL", KeystorePEM: pki.ServerKeystore, Mechanisms: []string{"PLAIN"}, PlainUsers: map[string]string{"cluster1_user": "cluster1_password"}},
		"cluster2": {Protocol: "SASL_SSL", KeystorePEM: pki.ServerKeystore, Mechanisms: []string{"PLAIN"}, PlainUsers: map[string]string{"cluster2_user": "cluster2_password"}},
	})
	c1, c2 := cs["cluster1"], cs["cluster2"]
	t.Logf("two SASL_SSL brokers up after %v", time.Since(began).Round(time.Millisecond))
	if err := kafkatest.CreateTopic(ctx, cluster.DirectOpts(c1), "orders", 3, 1, nil); err != nil {
		t.Fatal(err)
	}
	produceIDs(t, cluster.DirectOpts(c1), "orders", "f", 0, 60)
	trust := []string{
		"cluster1.ssl.truststore.location = " + stores.trust["JKS"],
		"cluster1.ssl.truststore.password = " + storePass,
		"cluster2.ssl.truststore.type = PKCS12",
		"cluster2.ssl.truststore.location = " + stores.trust["PKCS12"],
		"cluster2.ssl.truststore.password = " + storePass,
	}
	file := issueFixtureFor(t, c1, c2, trust...)

	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(rctx, []string{"replicate", "--mm2-config", file, "--session-timeout", "6s", "--log-level", "debug"}, nil, &stdout, &stderr)
	}()
	pollUntil(t, 60*time.Second, func() string {
		if n := countCommitted(cluster.DirectOpts(c2), "cluster1.orders"); n != 60 {
			return fmt.Sprintf("cluster1.orders on cluster2 has %d of 60 records; reo stderr:\n%s", n, stderr.String())
		}
		return ""
	})
	t.Logf("copied after %v", time.Since(began).Round(time.Millisecond))
	if v := oracle.Check(dumpTopic(t, cluster.DirectOpts(c1), "orders"), dumpTopic(t, cluster.DirectOpts(c2), "cluster1.orders"), oracle.PrefixMapping("cluster1"), nil); !v.OK() {
		t.Errorf("cluster1.orders is not an exactly-once copy:\n%s", v)
	}
	rcancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after a graceful stop, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("reo did not stop within 15s")
	}
	assertNoSecret(t, "reo's output", stdout.String()+stderr.String(), "cluster1_password", "cluster2_password", storePass)

	wrong := issueFixtureFor(t, c1, c2, trust...)
	b, _ := os.ReadFile(wrong)
	if err := os.WriteFile(wrong, []byte(strings.Replace(string(b), `password="cluster1_password"`, `password="not-the-password"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	var wout, werr syncBuffer
	wdone := make(chan int, 1)
	go func() { wdone <- run(ctx, []string{"replicate", "--mm2-config", wrong}, nil, &wout, &werr) }()
	select {
	case code := <-wdone:
		if code != 1 {
			t.Errorf("wrong password: exit code %d, want 1; stderr:\n%s", code, werr.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("wrong password: reo still runs after 40s; stderr:\n%s", werr.String())
	}
	out := werr.String()
	if !strings.Contains(out, "reo: flow cluster1->cluster2 stopped: ") || !strings.Contains(out, "source cluster refused") || !strings.Contains(out, "SASL_AUTHENTICATION_FAILED") {
		t.Errorf("wrong password: the error does not name the flow, the source cluster and the SASL failure:\n%s", out)
	}
	assertNoSecret(t, "reo's output with a wrong password", wout.String()+out, "not-the-password", "cluster2_password")
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "reo: ") {
			t.Logf("wrong password: %s", line)
		}
	}
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}

// TestMM2ScramMutualTLSRealKafka proves an MM2 file with SCRAM-SHA-512 and
// mutual TLS drives reo against a real Kafka 4.4 broker whose SECURE
// listener requires a client certificate and SCRAM (user created through
// the admin API): the source alias uses a JKS keystore with its own key
// password (keytool) and a PKCS12 truststore, the destination alias a
// PKCS12 keystore and a JKS truststore, and the password comes from
// ${env:...}. Both aliases reach the same broker, with topics = orders
// only (reo refuses a selection that would take its own copies).
func TestMM2ScramMutualTLSRealKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka broker JVMs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	pki := newPKI(t)
	stores := jdkStores(t, pki)
	c := startSecureClusters(ctx, t, map[string]cluster.SecureListener{
		"mtls": {Protocol: "SASL_SSL", KeystorePEM: pki.ServerKeystore, ClientCAs: pki.CAFile, Mechanisms: []string{"SCRAM-SHA-512"}},
	})["mtls"]
	pw := randomSecret(t, "scram-pw-")
	if err := cluster.CreateSCRAMUser(ctx, c, "SCRAM-SHA-512", "mirror", pw); err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.CreateTopic(ctx, cluster.DirectOpts(c), "orders", 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	produceIDs(t, cluster.DirectOpts(c), "orders", "s", 0, 40)
	bootstrap := strings.Join(c.SecureBootstrap(), ",")
	file := writeMM2(t,
		"clusters = primary, dr",
		"config.providers = env",
		"config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"primary.bootstrap.servers = "+bootstrap,
		"dr.bootstrap.servers = "+bootstrap,
		"security.protocol = SASL_SSL",
		"sasl.mechanism = SCRAM-SHA-512",
		`sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required \`,
		`    username="mirror" password="${env:MIRROR_PASSWORD}";`,
		"primary.ssl.truststore.type = PKCS12",
		"primary.ssl.truststore.location = "+stores.trust["PKCS12"],
		"primary.ssl.truststore.password = "+storePass,
		"primary.ssl.keystore.location = "+stores.key["JKS"],
		"primary.ssl.keystore.password = "+storePass,
		"primary.ssl.key.password = "+keyPass,
		"dr.ssl.truststore.location = "+stores.trust["JKS"],
		"dr.ssl.truststore.password = "+storePass,
		"dr.ssl.keystore.type = PKCS12",
		"dr.ssl.keystore.location = "+stores.key["PKCS12"],
		"dr.ssl.keystore.password = "+storePass,
		"primary->dr.enabled = true",
		"primary->dr.topics = orders",
		"tasks.max = 2",
	)
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(rctx, []string{"replicate", "--mm2-config", file, "--session-timeout", "6s"}, []string{"MIRROR_PASSWORD=" + pw}, &stdout, &stderr)
	}()
	pollUntil(t, 60*time.Second, func() string {
		if n := countCommitted(cluster.DirectOpts(c), "primary.orders"); n != 40 {
			return fmt.Sprintf("primary.orders has %d of 40 records; reo stderr:\n%s", n, stderr.String())
		}
		return ""
	})
	if v := oracle.Check(dumpTopic(t, cluster.DirectOpts(c), "orders"), dumpTopic(t, cluster.DirectOpts(c), "primary.orders"), oracle.PrefixMapping("primary"), nil); !v.OK() {
		t.Errorf("primary.orders is not an exactly-once copy:\n%s", v)
	}
	rcancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after a graceful stop, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("reo did not stop within 15s")
	}
	assertNoSecret(t, "reo's output", stdout.String()+stderr.String(), pw, storePass, keyPass)
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}
