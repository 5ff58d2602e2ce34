package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// security is how reo authenticates to one cluster and checks it: TLS and
// SASL. The password is held only here and in the SASL mechanism; it is
// never logged or printed.
type security struct {
	tls                bool
	tlsCA              string
	tlsCert, tlsKey    string
	tlsServerName      string
	tlsInsecure        bool
	saslMechanism      string
	saslUsername       string
	saslPassword       string // from the environment
	saslPasswordFile   string
	passwordFromEnvVar string // which variable held saslPassword, for messages
	saslToken          bool   // SCRAM with a delegation token (tokenauth=true)

	// Set by the MirrorMaker 2 import (mm2.go), which reads JKS, PKCS12
	// and PEM stores itself: the trusted CAs and the client certificate,
	// already loaded; host names not checked
	// (ssl.endpoint.identification.algorithm empty); the lowest TLS
	// version (0: TLS 1.2).
	rootCAs         *x509.CertPool
	clientCert      *tls.Certificate
	noHostnameCheck bool
	tlsMinVersion   uint16
}

// SASL mechanisms reo supports.
const (
	mechPlain       = "PLAIN"
	mechScramSHA256 = "SCRAM-SHA-256"
	mechScramSHA512 = "SCRAM-SHA-512"
)

// securitySettings returns the TLS and SASL settings of one cluster: flags
// "<side>-tls-...", "<side>-sasl-..." and variables "<ENV>_TLS_...",
// "<ENV>_SASL_...". The password is environment-only or read from a file.
func securitySettings(side, env string, sec func(*settings) *security) []setting {
	cluster := side
	if side == "dest" {
		cluster = "destination"
	}
	str := func(p func(*security) *string) func(*settings, string) error {
		return func(c *settings, v string) error { *p(sec(c)) = strings.TrimSpace(v); return nil }
	}
	boolean := func(p func(*security) *bool) func(*settings, string) error {
		return boolSetting(func(c *settings) *bool { return p(sec(c)) })
	}
	return []setting{
		{heading: cluster + " cluster TLS and SASL", flag: side + "-tls", env: env + "_TLS", usage: "connect to the " + cluster + " cluster with TLS (implied by the other " + side + "-tls settings)", isBool: true,
			set: boolean(func(s *security) *bool { return &s.tls })},
		{flag: side + "-tls-ca", env: env + "_TLS_CA", usage: "PEM file of the CA certificates that sign the " + cluster + " brokers' certificates (default: the system roots)",
			set: str(func(s *security) *string { return &s.tlsCA })},
		{flag: side + "-tls-cert", env: env + "_TLS_CERT", usage: "PEM client certificate file for mutual TLS with the " + cluster + " cluster (with " + side + "-tls-key)",
			set: str(func(s *security) *string { return &s.tlsCert })},
		{flag: side + "-tls-key", env: env + "_TLS_KEY", usage: "PEM private key file of " + side + "-tls-cert",
			set: str(func(s *security) *string { return &s.tlsKey })},
		{flag: side + "-tls-server-name", env: env + "_TLS_SERVER_NAME", usage: "name to verify the " + cluster + " brokers' certificates against (default: the host dialed)",
			set: str(func(s *security) *string { return &s.tlsServerName })},
		{flag: side + "-tls-insecure-skip-verify", env: env + "_TLS_INSECURE_SKIP_VERIFY", usage: "DANGEROUS: do not verify the " + cluster + " brokers' certificates", isBool: true,
			set: boolean(func(s *security) *bool { return &s.tlsInsecure })},
		{flag: side + "-sasl-mechanism", env: env + "_SASL_MECHANISM", usage: "SASL mechanism for the " + cluster + " cluster: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: no SASL)",
			set: func(c *settings, v string) error {
				m := strings.ToUpper(strings.TrimSpace(v))
				switch m {
				case "", mechPlain, mechScramSHA256, mechScramSHA512:
					sec(c).saslMechanism = m
					return nil
				}
				return fmt.Errorf("%q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", v)
			}},
		{flag: side + "-sasl-username", env: env + "_SASL_USERNAME", usage: "SASL user name for the " + cluster + " cluster",
			set: str(func(s *security) *string { return &s.saslUsername })},
		{flag: side + "-sasl-password-file", env: env + "_SASL_PASSWORD_FILE", usage: "file holding the SASL password for the " + cluster + " cluster (one trailing newline is ignored)",
			clears: env + "_SASL_PASSWORD",
			set: func(c *settings, v string) error {
				s := sec(c)
				s.saslPasswordFile, s.saslPassword, s.passwordFromEnvVar = strings.TrimSpace(v), "", ""
				return nil
			}},
		{env: env + "_SASL_PASSWORD", usage: "SASL password for the " + cluster + " cluster (or use --" + side + "-sasl-password-file)", secret: true,
			clears: side + "-sasl-password-file",
			set: func(c *settings, v string) error {
				s := sec(c)
				s.saslPassword, s.saslPasswordFile, s.passwordFromEnvVar = v, "", env+"_SASL_PASSWORD"
				return nil
			}},
	}
}

// opts returns the kgo options for one cluster, reading the certificate,
// key and password files. Errors name the setting and the file, never a
// secret.
func (s *security) opts(side, env string) ([]kgo.Opt, error) {
	bad := func(flagSuffix, format string, args ...any) error {
		name := "--" + side + "-" + flagSuffix + " / " + env + "_" + strings.ToUpper(strings.ReplaceAll(flagSuffix, "-", "_"))
		return &usageError{name + ": " + fmt.Sprintf(format, args...)}
	}
	var opts []kgo.Opt
	if s.tls || s.tlsCA != "" || s.tlsCert != "" || s.tlsKey != "" || s.tlsServerName != "" || s.tlsInsecure {
		cfg := &tls.Config{MinVersion: max(tls.VersionTLS12, s.tlsMinVersion), ServerName: s.tlsServerName, InsecureSkipVerify: s.tlsInsecure} //nolint:gosec // only with the explicit flag
		cfg.RootCAs = s.rootCAs
		if s.clientCert != nil {
			cfg.Certificates = []tls.Certificate{*s.clientCert}
		}
		if s.noHostnameCheck && !s.tlsInsecure {
			// The chain is still verified against the CAs; only the
			// host name is not (Kafka's empty
			// ssl.endpoint.identification.algorithm).
			cfg.InsecureSkipVerify = true //nolint:gosec // verified below
			cfg.VerifyConnection = verifyChainOnly(s.rootCAs)
		}
		if s.tlsCA != "" {
			pem, err := os.ReadFile(s.tlsCA)
			if err != nil {
				return nil, bad("tls-ca", "read CA file: %v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, bad("tls-ca", "%s holds no PEM certificate", s.tlsCA)
			}
			cfg.RootCAs = pool
		}
		switch {
		case s.tlsCert != "" && s.tlsKey != "":
			cert, err := tls.LoadX509KeyPair(s.tlsCert, s.tlsKey)
			if err != nil {
				return nil, bad("tls-cert", "load client certificate %s and key %s: %v", s.tlsCert, s.tlsKey, err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		case s.tlsCert != "":
			return nil, bad("tls-key", "--%s-tls-cert is set without its key", side)
		case s.tlsKey != "":
			return nil, bad("tls-cert", "--%s-tls-key is set without its certificate", side)
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}

	if s.saslPasswordFile != "" {
		b, err := os.ReadFile(s.saslPasswordFile)
		if err != nil {
			return nil, bad("sasl-password-file", "read password file: %v", err)
		}
		s.saslPassword = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	}
	hasCreds := s.saslUsername != "" || s.saslPassword != ""
	switch {
	case s.saslMechanism == "" && hasCreds:
		return nil, bad("sasl-mechanism", "a SASL user name or password is set but no mechanism: set PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	case s.saslMechanism == "":
		return opts, nil
	case s.saslUsername == "":
		return nil, bad("sasl-username", "SASL %s needs a user name", s.saslMechanism)
	case s.saslPassword == "":
		return nil, bad("sasl-password-file", "SASL %s needs a password: set %s_SASL_PASSWORD or a password file", s.saslMechanism, env)
	}
	return append(opts, kgo.SASL(s.saslMech())), nil
}

// saslMech is the SASL mechanism of s (saslMechanism set).
func (s *security) saslMech() sasl.Mechanism {
	switch s.saslMechanism {
	case mechScramSHA256:
		return scram.Auth{User: s.saslUsername, Pass: s.saslPassword, IsToken: s.saslToken}.AsSha256Mechanism()
	case mechScramSHA512:
		return scram.Auth{User: s.saslUsername, Pass: s.saslPassword, IsToken: s.saslToken}.AsSha512Mechanism()
	}
	return plain.Auth{User: s.saslUsername, Pass: s.saslPassword}.AsMechanism()
}

// verifyChainOnly verifies a server's certificate chain against roots
// (nil: the system roots) without checking its host name.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("the server sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
		return err
	}
}

// warnings lists what an operator should know about a cluster's security
// settings; run logs them at start.
func (s *security) warnings() []string {
	var out []string
	tlsOn := s.tls || s.tlsCA != "" || s.tlsCert != "" || s.tlsKey != "" || s.tlsServerName != "" || s.tlsInsecure
	if s.tlsInsecure {
		out = append(out, "TLS certificate verification is disabled (tls-insecure-skip-verify): the cluster's identity is not checked")
	}
	if s.saslMechanism == mechPlain && !tlsOn {
		out = append(out, "SASL PLAIN without TLS sends the password in clear text")
	}
	return out
}
