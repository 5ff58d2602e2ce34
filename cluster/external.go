package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// external is a cluster the user runs. It is not proxied (its brokers
// advertise their own addresses), so network faults do not apply; it
// cannot be closed, only forgotten. Configuration comes from
// REO_EXTERNAL_<NAME>_* environment variables, NAME being the upper-cased
// Spec.Name:
//
//	BOOTSTRAP_SERVERS  comma-separated host:port list (required)
//	TLS                "true" to use TLS with system roots
//	TLS_CA_FILE        PEM CA bundle (implies TLS)
//	TLS_CERT_FILE, TLS_KEY_FILE  client certificate (implies TLS)
//	TLS_SERVER_NAME    server name to verify
//	SASL_MECHANISM     PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
//	SASL_USERNAME, SASL_PASSWORD
type external struct {
	name  string
	seeds []string
	opts  []kgo.Opt
}

func envName(spec, key string) string {
	return "REO_EXTERNAL_" + strings.ToUpper(spec) + "_" + key
}

func startExternal(spec Spec) (Cluster, error) {
	get := func(k string) string { return os.Getenv(envName(spec.Name, k)) }
	bs := get("BOOTSTRAP_SERVERS")
	if bs == "" {
		return nil, fmt.Errorf("%w: %s is not set", ErrUnavailable, envName(spec.Name, "BOOTSTRAP_SERVERS"))
	}
	e := &external{name: spec.Name}
	for _, s := range strings.Split(bs, ",") {
		if s = strings.TrimSpace(s); s != "" {
			e.seeds = append(e.seeds, s)
		}
	}
	e.opts = append(e.opts, kgo.SeedBrokers(e.seeds...))
	if get("TLS") == "true" || get("TLS_CA_FILE") != "" || get("TLS_CERT_FILE") != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: get("TLS_SERVER_NAME")}
		if ca := get("TLS_CA_FILE"); ca != "" {
			pem, err := os.ReadFile(ca)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", envName(spec.Name, "TLS_CA_FILE"), err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%s: no PEM certificate in %s", envName(spec.Name, "TLS_CA_FILE"), ca)
			}
		}
		if cert := get("TLS_CERT_FILE"); cert != "" {
			pair, err := tls.LoadX509KeyPair(cert, get("TLS_KEY_FILE"))
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", envName(spec.Name, "TLS_CERT_FILE"), envName(spec.Name, "TLS_KEY_FILE"), err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		e.opts = append(e.opts, kgo.DialTLSConfig(cfg))
	}
	user, pass := get("SASL_USERNAME"), get("SASL_PASSWORD")
	switch m := strings.ToUpper(get("SASL_MECHANISM")); m {
	case "":
	case "PLAIN":
		e.opts = append(e.opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
	case "SCRAM-SHA-256":
		e.opts = append(e.opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		e.opts = append(e.opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("%s=%q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", envName(spec.Name, "SASL_MECHANISM"), m)
	}
	return e, nil
}

func (e *external) Name() string          { return e.name }
func (e *external) Kind() Kind            { return External }
func (e *external) Bootstrap() []string   { return append([]string(nil), e.seeds...) }
func (e *external) ClientOpts() []kgo.Opt { return append([]kgo.Opt(nil), e.opts...) }
func (e *external) Link(int32) *Link      { return nil }
func (e *external) Close() error          { return nil }

// Brokers lists the seed addresses; broker ids are unknown without a
// metadata request and are numbered from 0 here.
func (e *external) Brokers() []Broker {
	var out []Broker
	for i, s := range e.seeds {
		out = append(out, Broker{ID: int32(i), Addr: s, Direct: s})
	}
	return out
}
