package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reo-kafka/reo/internal/localhost"
)

// SecureListener asks the local provider for one more client listener on
// every broker, named SECURE, on 127.0.0.1 (not proxied), speaking TLS
// and/or SASL; the CLIENT listener stays PLAINTEXT for the harness. The
// certificates come from the test (files it made with Go, keytool or
// openssl); SCRAM users are created through the admin API once the
// cluster runs (CreateSCRAMUser).
type SecureListener struct {
	// Protocol is the listener's security protocol: SSL, SASL_SSL or
	// SASL_PLAINTEXT.
	Protocol string
	// KeystorePEM is the brokers' private key (PKCS#8, unencrypted) and
	// certificate chain in one PEM file (Kafka's ssl.keystore.type=PEM).
	// Required with SSL and SASL_SSL.
	KeystorePEM string
	// ClientCAs, when set, is a PEM file of the CAs that sign client
	// certificates, and the listener requires one (mutual TLS,
	// ssl.client.auth=required).
	ClientCAs string
	// Mechanisms are the SASL mechanisms the listener accepts: PLAIN,
	// SCRAM-SHA-256, SCRAM-SHA-512.
	Mechanisms []string
	// PlainUsers are the PLAIN users and their passwords.
	PlainUsers map[string]string
}

// SecureCluster is a local cluster with a SECURE listener.
type SecureCluster struct {
	Cluster
	l *local
}

// SecureBootstrap lists every broker's SECURE listener.
func (c *SecureCluster) SecureBootstrap() []string {
	var out []string
	for _, n := range c.l.nodes {
		out = append(out, fmt.Sprintf("127.0.0.1:%d", n.secure))
	}
	return out
}

// StartSecureLocal starts a local cluster (real Kafka brokers, see
// local.go) whose brokers also listen on SECURE as sec says.
func StartSecureLocal(ctx context.Context, spec Spec, sec SecureListener) (*SecureCluster, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if err := sec.validate(); err != nil {
		return nil, fmt.Errorf("cluster spec %s: %w", spec.Name, err)
	}
	c, err := startLocalWith(ctx, spec, &sec)
	if err != nil {
		return nil, err
	}
	return &SecureCluster{Cluster: c, l: c.(*local)}, nil
}

func (s *SecureListener) validate() error {
	tls, sasl := false, false
	switch s.Protocol {
	case "SSL":
		tls = true
	case "SASL_SSL":
		tls, sasl = true, true
	case "SASL_PLAINTEXT":
		sasl = true
	default:
		return fmt.Errorf("secure listener protocol %q is not SSL, SASL_SSL or SASL_PLAINTEXT", s.Protocol)
	}
	if tls && s.KeystorePEM == "" {
		return errors.New("secure listener: " + s.Protocol + " needs KeystorePEM")
	}
	if !tls && s.ClientCAs != "" {
		return errors.New("secure listener: ClientCAs needs TLS")
	}
	if sasl && len(s.Mechanisms) == 0 {
		return errors.New("secure listener: " + s.Protocol + " needs Mechanisms")
	}
	for _, m := range s.Mechanisms {
		if !slices.Contains([]string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}, m) {
			return fmt.Errorf("secure listener: mechanism %q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", m)
		}
	}
	return nil
}

// javaQuote quotes s for a JAAS configuration.
func javaQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// addSecureListener adds the SECURE listener to node n's broker
// properties, picking its port the first time.
func (l *local) addSecureListener(n *node, props map[string]string) error {
	if l.sec == nil {
		return nil
	}
	if n.secure == 0 {
		p, err := localhost.FreePort()
		if err != nil {
			return err
		}
		n.secure = p
	}
	addr := fmt.Sprintf("127.0.0.1:%d", n.secure)
	props["listeners"] += ",SECURE://" + addr
	props["advertised.listeners"] += ",SECURE://" + addr
	props["listener.security.protocol.map"] += ",SECURE:" + l.sec.Protocol
	const p = "listener.name.secure."
	if l.sec.KeystorePEM != "" {
		props[p+"ssl.keystore.type"] = "PEM"
		props[p+"ssl.keystore.location"] = l.sec.KeystorePEM
	}
	if l.sec.ClientCAs != "" {
		props[p+"ssl.client.auth"] = "required"
		props[p+"ssl.truststore.type"] = "PEM"
		props[p+"ssl.truststore.location"] = l.sec.ClientCAs
	}
	if len(l.sec.Mechanisms) > 0 {
		props[p+"sasl.enabled.mechanisms"] = strings.Join(l.sec.Mechanisms, ",")
	}
	for _, m := range l.sec.Mechanisms {
		key := p + strings.ToLower(m) + ".sasl.jaas.config"
		if m != "PLAIN" {
			props[key] = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
			continue
		}
		users := make([]string, 0, len(l.sec.PlainUsers))
		for u := range l.sec.PlainUsers {
			users = append(users, u)
		}
		sort.Strings(users)
		var b strings.Builder
		b.WriteString("org.apache.kafka.common.security.plain.PlainLoginModule required")
		for _, u := range users {
			b.WriteString(" user_" + u + "=" + javaQuote(l.sec.PlainUsers[u]))
		}
		b.WriteString(";")
		props[key] = b.String()
	}
	return nil
}

// CreateSCRAMUser creates or updates a SCRAM user (mechanism SCRAM-SHA-256
// or SCRAM-SHA-512) through the admin API, over the cluster's plaintext
// client listener.
func CreateSCRAMUser(ctx context.Context, c Cluster, mechanism, user, password string) error {
	var mech kadm.ScramMechanism
	switch mechanism {
	case "SCRAM-SHA-256":
		mech = kadm.ScramSha256
	case "SCRAM-SHA-512":
		mech = kadm.ScramSha512
	default:
		return fmt.Errorf("SCRAM mechanism %q is not SCRAM-SHA-256 or SCRAM-SHA-512", mechanism)
	}
	cl, err := kgo.NewClient(DirectOpts(c)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mech, Iterations: 4096, Password: password}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		return fmt.Errorf("create SCRAM user %s (%s) on %s: %w", user, mechanism, c.Name(), err)
	}
	return nil
}
