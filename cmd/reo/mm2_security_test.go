package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"software.sslmate.com/src/go-pkcs12"
)

// testStores are the test PKI's CA (truststores) and client certificate
// and key (keystores) in every format reo reads, by type.
type testStores struct {
	trust, key map[string]string
	ca         *x509.Certificate
}

const (
	storePass = "store-pass-1"
	keyPass   = "key-pass-2" // the JKS key's own password
)

// makeStores writes JKS and PKCS12 stores made in Go, and PEM files.
func makeStores(t *testing.T, pki *testPKI) *testStores {
	t.Helper()
	dir := t.TempDir()
	caPEM, err := os.ReadFile(pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(caPEM)
	ca, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	client, err := tls.LoadX509KeyPair(pki.ClientCertFile, pki.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(client.Certificate[0])
	keyDER, err := x509.MarshalPKCS8PrivateKey(client.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	s := &testStores{trust: map[string]string{"PEM": pki.CAFile}, key: map[string]string{}, ca: ca}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var buf bytes.Buffer
	ts := keystore.New()
	if err := ts.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Raw}}); err != nil {
		t.Fatal(err)
	}
	if err := ts.Store(&buf, []byte(storePass)); err != nil {
		t.Fatal(err)
	}
	s.trust["JKS"] = write("trust.jks", buf.Bytes())
	buf.Reset()
	ks := keystore.New()
	if err := ks.SetPrivateKeyEntry("reo", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: keyDER,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: leaf.Raw}, {Type: "X509", Content: ca.Raw}}}, []byte(keyPass)); err != nil {
		t.Fatal(err)
	}
	if err := ks.Store(&buf, []byte(storePass)); err != nil {
		t.Fatal(err)
	}
	s.key["JKS"] = write("key.jks", buf.Bytes())
	p12, err := pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{ca}, storePass)
	if err != nil {
		t.Fatal(err)
	}
	s.trust["PKCS12"] = write("trust.p12", p12)
	p12, err = pkcs12.Modern2023.Encode(client.PrivateKey, leaf, []*x509.Certificate{ca}, storePass)
	if err != nil {
		t.Fatal(err)
	}
	s.key["PKCS12"] = write("key.p12", p12)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	certPEM, err := os.ReadFile(pki.ClientCertFile)
	if err != nil {
		t.Fatal(err)
	}
	s.key["PEM"] = write("key.pem", append(keyPEM, certPEM...))
	return s
}

// TestMM2StoresEveryFormat proves reo reads the truststores and keystores
// MirrorMaker 2 users have, made in Go and (where the tools are installed)
// by the JDK's keytool and by openssl: JKS, PKCS12 and PEM (with an
// encrypted PKCS#8 key and ssl.key.password), a JKS or PKCS12 store under
// the other's type (as the JDK reads both), and that a wrong store
// password, a wrong key password and a type that does not match the file
// are refused naming the key to fix.
func TestMM2StoresEveryFormat(t *testing.T) {
	pki := newPKI(t)
	s := makeStores(t, pki)
	dir := t.TempDir()
	if kt, err := exec.LookPath("keytool"); err == nil {
		for _, typ := range []string{"JKS", "PKCS12"} {
			p := filepath.Join(dir, "keytool-trust."+strings.ToLower(typ))
			if out, err := exec.Command(kt, "-importcert", "-noprompt", "-alias", "ca", "-file", pki.CAFile, "-keystore", p, "-storepass", storePass, "-storetype", typ).CombinedOutput(); err != nil {
				t.Fatalf("keytool: %v\n%s", err, out)
			}
			s.trust["keytool-"+typ] = p
		}
		if ossl, err := exec.LookPath("openssl"); err == nil {
			p12 := filepath.Join(dir, "openssl-key.p12")
			if out, err := exec.Command(ossl, "pkcs12", "-export", "-in", pki.ClientCertFile, "-inkey", pki.ClientKeyFile, "-certfile", pki.CAFile,
				"-name", "reo", "-out", p12, "-passout", "pass:"+storePass).CombinedOutput(); err != nil {
				t.Fatalf("openssl pkcs12: %v\n%s", err, out)
			}
			s.key["openssl-PKCS12"] = p12
			jks := filepath.Join(dir, "keytool-key.jks")
			if out, err := exec.Command(kt, "-importkeystore", "-noprompt", "-srckeystore", p12, "-srcstoretype", "PKCS12", "-srcstorepass", storePass,
				"-destkeystore", jks, "-deststoretype", "JKS", "-deststorepass", storePass, "-destkeypass", keyPass).CombinedOutput(); err != nil {
				t.Fatalf("keytool -importkeystore: %v\n%s", err, out)
			}
			s.key["keytool-JKS"] = jks
		}
	} else {
		t.Logf("no keytool: JDK-made stores not tried (%v)", err)
	}
	if ossl, err := exec.LookPath("openssl"); err == nil {
		enc := filepath.Join(dir, "key-encrypted.pem")
		out, err := exec.Command(ossl, "pkcs8", "-topk8", "-v2", "aes256", "-in", pki.ClientKeyFile, "-passout", "pass:"+keyPass).Output()
		if err != nil {
			t.Fatalf("openssl pkcs8: %v", err)
		}
		cert, _ := os.ReadFile(pki.ClientCertFile)
		if err := os.WriteFile(enc, append(out, cert...), 0o600); err != nil {
			t.Fatal(err)
		}
		s.key["encrypted-PEM"] = enc
	} else {
		t.Logf("no openssl: encrypted PEM keys not tried (%v)", err)
	}
	typeOf := func(name string) string { return name[strings.LastIndex(name, "-")+1:] }

	for name, path := range s.trust {
		typ := typeOf(name)
		pw := storePass
		if typ == "PEM" {
			pw = ""
		}
		pool, n, err := loadTrustStore(path, typ, pw, "")
		if err != nil || n != 1 {
			t.Errorf("truststore %s: %d certificates, %v", name, n, err)
			continue
		}
		leaf, _ := x509.ParseCertificate(pki.ServerCert.Certificate[0])
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
			t.Errorf("truststore %s does not verify the broker certificate: %v", name, err)
		}
		if typ == "PEM" {
			continue
		}
		other := map[string]string{"JKS": "PKCS12", "PKCS12": "JKS"}[typ]
		if _, _, err := loadTrustStore(path, other, pw, ""); err != nil {
			t.Errorf("truststore %s declared as %s: %v (the JDK reads either format under both types)", name, other, err)
		}
		var se *storeError
		if _, _, err := loadTrustStore(path, typ, "wrong-pass", ""); !errors.As(err, &se) || se.field != "ssl.truststore.password" || !strings.Contains(se.msg, "wrong password for truststore") {
			t.Errorf("truststore %s with a wrong password: %v", name, err)
		}
		if _, _, err := loadTrustStore(path, "PEM", "", ""); !errors.As(err, &se) || se.field != "ssl.truststore.type" {
			t.Errorf("truststore %s declared PEM: %v", name, err)
		}
	}
	for name, path := range s.key {
		typ := typeOf(name)
		spw, kpw := storePass, keyPass
		switch typ {
		case "PKCS12":
			kpw = ""
		case "PEM":
			spw, kpw = "", ""
			if name == "encrypted-PEM" {
				kpw = keyPass
			}
		}
		cert, err := loadKeyStore(path, typ, spw, kpw, "", "")
		if err != nil {
			t.Errorf("keystore %s: %v", name, err)
			continue
		}
		if cert.Leaf.Subject.CommonName != "reo" {
			t.Errorf("keystore %s: certificate %s, want CN=reo", name, cert.Leaf.Subject)
		}
		var se *storeError
		switch {
		case typ == "JKS":
			if _, err := loadKeyStore(path, typ, "wrong-pass", kpw, "", ""); !errors.As(err, &se) || se.field != "ssl.keystore.password" {
				t.Errorf("keystore %s with a wrong store password: %v", name, err)
			}
			if _, err := loadKeyStore(path, typ, spw, "wrong-key-pass", "", ""); !errors.As(err, &se) || se.field != "ssl.key.password" {
				t.Errorf("keystore %s with a wrong key password: %v", name, err)
			}
		case typ == "PKCS12":
			if _, err := loadKeyStore(path, typ, "wrong-pass", "", "", ""); !errors.As(err, &se) || se.field != "ssl.keystore.password" {
				t.Errorf("keystore %s with a wrong password: %v", name, err)
			}
		case name == "encrypted-PEM":
			if _, err := loadKeyStore(path, typ, "", "wrong-key-pass", "", ""); !errors.As(err, &se) || se.field != "ssl.key.password" {
				t.Errorf("keystore %s with a wrong key password: %v", name, err)
			}
			if _, err := loadKeyStore(path, typ, "", "", "", ""); !errors.As(err, &se) || se.field != "ssl.key.password" {
				t.Errorf("keystore %s without ssl.key.password: %v", name, err)
			}
		}
	}
	// Inline PEM: ssl.truststore.certificates, ssl.keystore.key and
	// ssl.keystore.certificate.chain.
	caPEM, _ := os.ReadFile(pki.CAFile)
	keyPEM, _ := os.ReadFile(pki.ClientKeyFile)
	certPEM, _ := os.ReadFile(pki.ClientCertFile)
	if _, n, err := loadTrustStore("", "PEM", "", string(caPEM)); err != nil || n != 1 {
		t.Errorf("ssl.truststore.certificates: %d, %v", n, err)
	}
	if _, err := loadKeyStore("", "PEM", "", "", string(keyPEM), string(certPEM)); err != nil {
		t.Errorf("ssl.keystore.key and certificate.chain: %v", err)
	}
}

// TestMM2SecureFlowInProcess proves an MM2 file's security settings reach
// the clients, end to end, against in-process clusters that demand them:
// the source requires mutual TLS (JKS truststore, PKCS12 keystore) and
// SCRAM-SHA-512 with the password from ${env:...}; the destination TLS
// (PEM truststore) and PLAIN; host names are verified. Records are copied
// to the prefixed topic; no password appears in the output; the wrong
// truststore password is refused naming its line.
func TestMM2SecureFlowInProcess(t *testing.T) {
	pki := newPKI(t)
	s := makeStores(t, pki)
	srcPass, dstPass := randomSecret(t, "src-pw-"), randomSecret(t, "dst-pw-")
	serverTLS := func(clientAuth tls.ClientAuthType) *tls.Config {
		return &tls.Config{Certificates: []tls.Certificate{pki.ServerCert}, ClientAuth: clientAuth, ClientCAs: pki.CAPool, MinVersion: tls.VersionTLS12}
	}
	src := fakeCluster(t, "src", kfake.SeedTopics(2, "in"), kfake.TLS(serverTLS(tls.RequireAndVerifyClientCert)),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "reo-src", srcPass))
	dst := fakeCluster(t, "dst", kfake.TLS(serverTLS(tls.NoClientCert)), kfake.EnableSASL(), kfake.Superuser("PLAIN", "reo-dst", dstPass))
	clientCert, err := tls.LoadX509KeyPair(pki.ClientCertFile, pki.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: pki.CAPool, Certificates: []tls.Certificate{clientCert}, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: "reo-src", Pass: srcPass}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 20 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte(fmt.Sprint("v", i))}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	lines := func(trustPass string) []string {
		return []string{
			"clusters = onprem, cloud",
			"config.providers = env",
			"config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider",
			"onprem.bootstrap.servers = " + strings.Join(src.ListenAddrs(), ","),
			"onprem.security.protocol = SASL_SSL",
			"onprem.sasl.mechanism = SCRAM-SHA-512",
			`onprem.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="reo-src" password="${env:SRC_PW}";`,
			"onprem.ssl.truststore.location = " + s.trust["JKS"],
			"onprem.ssl.truststore.password = " + trustPass,
			"onprem.ssl.keystore.location = " + s.key["PKCS12"],
			"onprem.ssl.keystore.type = PKCS12",
			"onprem.ssl.keystore.password = " + storePass,
			"cloud.bootstrap.servers = " + strings.Join(dst.ListenAddrs(), ","),
			"cloud.security.protocol = SASL_SSL",
			"cloud.sasl.mechanism = PLAIN",
			`cloud.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="reo-dst" password="` + dstPass + `";`,
			"cloud.ssl.truststore.type = PEM",
			"cloud.ssl.truststore.location = " + s.trust["PEM"],
			"onprem->cloud.enabled = true",
			"tasks.max = 2",
		}
	}
	env := []string{"SRC_PW=" + srcPass}

	var out, errb bytes.Buffer
	bad := writeMM2(t, lines("wrong-pass")...)
	if code := run(context.Background(), []string{"replicate", "--mm2-config", bad}, env, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), bad+" line 9: onprem.ssl.truststore.password: wrong password for truststore "+s.trust["JKS"]) {
		t.Errorf("wrong truststore password: exit %d, stderr:\n%s", code, errb.String())
	}

	file := writeMM2(t, lines(storePass)...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replicate", "--mm2-config", file, "--log-level", "debug", "--session-timeout", "6s"}, env, &stdout, &stderr)
	}()
	dstOpts := []kgo.Opt{kgo.SeedBrokers(dst.ListenAddrs()...), kgo.DialTLSConfig(&tls.Config{RootCAs: pki.CAPool, MinVersion: tls.VersionTLS12}),
		kgo.SASL(plain.Auth{User: "reo-dst", Pass: dstPass}.AsMechanism())}
	consumeN(t, dstOpts, "onprem.in", 20, 30*time.Second, &stderr)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after a graceful stop, want 0; stderr:\n%s", code, stderr.String())
	}
	assertNoSecret(t, "reo's output", stdout.String()+stderr.String()+errb.String(), srcPass, dstPass, storePass)
}

// TestMM2OneFlowStopsOthersGoOn proves that when one flow of a file stops
// on an error, the others keep copying: /readyz is 503 and names the
// stopped flow with its error while the healthy flow stays ready, the
// process keeps running until SIGTERM (a cancel) and then exits with the
// stopped flow's code (2: a configuration error found at run time,
// --max-inflight-bytes too small for the shard count the destination
// gives). When every flow stops, the process exits by itself.
func TestMM2OneFlowStopsOthersGoOn(t *testing.T) {
	a := fakeCluster(t, "a", kfake.SeedTopics(2, "in"))
	b := fakeCluster(t, "b")
	c := fakeCluster(t, "c")
	prod, err := kgo.NewClient(kgo.SeedBrokers(a.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 10 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte(fmt.Sprint("v", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	file := writeMM2(t,
		"clusters = a, b, c",
		"a.bootstrap.servers = "+strings.Join(a.ListenAddrs(), ","),
		"b.bootstrap.servers = "+strings.Join(b.ListenAddrs(), ","),
		"c.bootstrap.servers = "+strings.Join(c.ListenAddrs(), ","),
		"a->b.enabled = true",
		"a->b.tasks.max = 1",
		"a->c.enabled = true",
	)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replicate", "--mm2-config", file, "--max-inflight-bytes", "512KiB", "--metrics-addr", addr, "--session-timeout", "6s"}, nil, io.Discard, &stderr)
	}()
	consumeN(t, []kgo.Opt{kgo.SeedBrokers(b.ListenAddrs()...)}, "a.in", 10, 30*time.Second, &stderr)
	pollUntil(t, 30*time.Second, func() string {
		code, body := get("http://" + addr + "/readyz")
		var h flowsHealth
		if err := json.Unmarshal([]byte(body), &h); err != nil || code != 503 || h.Ready || len(h.Flows) != 2 {
			return fmt.Sprintf("/readyz %d %s, want 503 with two flows", code, body)
		}
		ab, ac := h.Flows[0], h.Flows[1]
		if ab.Flow != "a->b" || !ab.Ready || ac.Flow != "a->c" || ac.Ready || !strings.Contains(ac.Stopped, "MaxInflightBytes") {
			return fmt.Sprintf("/readyz flows %+v, want a->b ready and a->c stopped on MaxInflightBytes", h.Flows)
		}
		return ""
	})
	if !strings.Contains(stderr.String(), "reo: flow a->c invalid configuration: --max-inflight-bytes / REO_MAX_INFLIGHT_BYTES: ") {
		t.Errorf("stderr does not say flow a->c stopped, naming the setting:\n%s", stderr.String())
	}
	// a->b still copies.
	for i := range 5 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte(fmt.Sprint("more", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consumeN(t, []kgo.Opt{kgo.SeedBrokers(b.ListenAddrs()...)}, "a.in", 15, 30*time.Second, &stderr)
	select {
	case code := <-done:
		t.Fatalf("reo exited (%d) while flow a->b was healthy; stderr:\n%s", code, stderr.String())
	default:
	}
	cancel()
	select {
	case code := <-done:
		if code != 2 {
			t.Errorf("exit code %d, want 2 (flow a->c stopped on a configuration error); stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("reo did not stop; stderr:\n%s", stderr.String())
	}

	// Every flow stops: the process exits on its own.
	all := writeMM2(t,
		"clusters = a, b, c",
		"a.bootstrap.servers = "+strings.Join(a.ListenAddrs(), ","),
		"b.bootstrap.servers = "+strings.Join(b.ListenAddrs(), ","),
		"c.bootstrap.servers = "+strings.Join(c.ListenAddrs(), ","),
		"a->b.enabled = true",
		"a->b.reo.name = second-a-to-b",
		"a->c.enabled = true",
	)
	var errb syncBuffer
	go func() {
		done <- run(context.Background(), []string{"replicate", "--mm2-config", all, "--max-inflight-bytes", "512KiB"}, nil, io.Discard, &errb)
	}()
	select {
	case code := <-done:
		if code != 2 || !strings.Contains(errb.String(), "flows that stopped on an error: a->b, a->c") {
			t.Errorf("exit code %d, want 2 naming both flows; stderr:\n%s", code, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("reo still runs with every flow stopped; stderr:\n%s", errb.String())
	}
}

// TestJAASErrorsQuoteNoValueText proves that a sasl.jaas.config that does
// not parse is refused without quoting any text that may be part of an
// option value: once a value was an unquoted word, the words after it may
// be the rest of it (password=correct horse battery, a ';' or '=' inside
// an unquoted password), so options are named by their place and a later
// module's name and control flag are not quoted; after quoted values,
// option names and control flags are still quoted to help.
func TestJAASErrorsQuoteNoValueText(t *testing.T) {
	const m = plainLoginModule + " required "
	for _, tc := range []struct {
		in      string
		want    string
		secrets []string
	}{
		{m + `username="u" password=correct horsebattery;`, "value not specified for option 3 of " + plainLoginModule, []string{"correct", "horsebattery"}},
		{m + `username="u" password=correct horse=battery staple;`, "value not specified for option 4 of", []string{"correct", "horse", "battery", "staple"}},
		{m + `username="u" password=correct horse=12;`, "value not specified for option 3 of", []string{"correct", "horse"}},
		{m + `username=u password=12345;`, "value not specified for option 2 of", []string{"12345"}},
		{m + `username="u" password=left;right;`, "invalid login module control flag a punctuation character after login module 2", []string{"left", "right"}},
		{m + `username="u" password=left;right side;`, "invalid login module control flag a word after login module 2", []string{"left", "right", "side"}},
		{m + `username="u" password=left=right;`, "expected an option name in " + plainLoginModule + ", found a punctuation character", []string{"left", "right", `"="`}},
		{m + `username="u" pasword "p";`, `value not specified for option "pasword" of ` + plainLoginModule, nil},
		{m + `username="u" password="zq"xw";`, "value not specified for option 3 of " + plainLoginModule, []string{"zq", "xw"}},
		{m + `username="u" password="p"; # prod`, `invalid login module control flag "prod" after #`, nil},
	} {
		_, err := parseJAAS(tc.in)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
			continue
		}
		assertNoSecret(t, "the error for "+tc.in, err.Error(), tc.secrets...)
	}

	path := writeMM2(t, "clusters = A, B", "A.bootstrap.servers = a:9092", "B.bootstrap.servers = b:9092", "A->B.enabled = true",
		"A.security.protocol = SASL_PLAINTEXT", "A.sasl.mechanism = PLAIN",
		`A.sasl.jaas.config = `+m+`username="u" password=correct horsebattery;`)
	var errb bytes.Buffer
	code := run(context.Background(), []string{"replicate", "--mm2-config", path}, nil, io.Discard, &errb)
	if code != 2 || !strings.Contains(errb.String(), path+" line 7: A.sasl.jaas.config: does not parse: value not specified for option 3 of") {
		t.Errorf("exit code %d, stderr %s; want 2 naming line 7, the key and option 3", code, errb.String())
	}
	assertNoSecret(t, "reo's stderr", errb.String(), "correct", "horsebattery")
}
