package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI is a throwaway CA with a server certificate for 127.0.0.1 and
// localhost and a client certificate, written as PEM files.
type testPKI struct {
	CAFile string // the CA certificate
	// ServerKeystore holds the server's PKCS#8 key and certificate chain in
	// one file, as Kafka's ssl.keystore.type=PEM reads it.
	ServerKeystore string
	ServerCert     tls.Certificate
	ClientCertFile string
	ClientKeyFile  string
	CAPool         *x509.CertPool
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey := genKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "reo test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("create CA certificate: %v", err)
	}
	ca, _ := x509.ParseCertificate(caDER)

	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		key := genKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatalf("create %s certificate: %v", cn, err)
		}
		return der, key
	}
	srvDER, srvKey := leaf(2, "broker", x509.ExtKeyUsageServerAuth)
	cliDER, cliKey := leaf(3, "reo", x509.ExtKeyUsageClientAuth)

	p := &testPKI{
		CAFile:         filepath.Join(dir, "ca.pem"),
		ServerKeystore: filepath.Join(dir, "server-keystore.pem"),
		ClientCertFile: filepath.Join(dir, "client.pem"),
		ClientKeyFile:  filepath.Join(dir, "client-key.pem"),
		CAPool:         x509.NewCertPool(),
	}
	p.CAPool.AddCert(ca)
	certPEM := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	keyPEM := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	write := func(path string, parts ...[]byte) {
		var b []byte
		for _, part := range parts {
			b = append(b, part...)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(p.CAFile, certPEM(caDER))
	write(p.ServerKeystore, keyPEM(srvKey), certPEM(srvDER), certPEM(caDER))
	write(p.ClientCertFile, certPEM(cliDER))
	write(p.ClientKeyFile, keyPEM(cliKey))
	p.ServerCert = tls.Certificate{Certificate: [][]byte{srvDER, caDER}, PrivateKey: srvKey}
	return p
}

func genKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
