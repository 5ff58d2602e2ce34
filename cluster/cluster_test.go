package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reo-kafka/reo/cluster"
)

// TestPomPinsKafkaVersion proves kafka/pom.xml (what `make kafka` fetches)
// and cluster.KafkaVersion (what the providers run) name the same release.
func TestPomPinsKafkaVersion(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pom, err := os.ReadFile(filepath.Join(root, "kafka", "pom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<kafka.version>([^<]+)</kafka.version>`).FindSubmatch(pom)
	if m == nil {
		t.Fatal("kafka/pom.xml has no <kafka.version>")
	}
	if string(m[1]) != cluster.KafkaVersion {
		t.Fatalf("kafka/pom.xml pins %s, cluster.KafkaVersion is %s", m[1], cluster.KafkaVersion)
	}
	for _, img := range []string{cluster.LocalKafkaImage, cluster.OfficialKafkaImage} {
		if !strings.HasSuffix(img, ":"+cluster.KafkaVersion) {
			t.Errorf("Kafka image %s is not version %s", img, cluster.KafkaVersion)
		}
	}
}

// TestImageNamesAgree proves `make images` builds the images under the
// names the testcontainers provider looks for, and that the compose test's
// and Dockerfile's offline paths name the same base.
func TestImageNamesAgree(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(BASE_IMAGE|KAFKA_IMAGE|REO_IMAGE)\s*:=\s*(\S+)`).FindAllSubmatch(mk, -1) {
		vars[string(m[1])] = strings.ReplaceAll(string(m[2]), "$(KAFKA_VERSION)", cluster.KafkaVersion)
	}
	for name, want := range map[string]string{"BASE_IMAGE": cluster.BaseImage, "KAFKA_IMAGE": cluster.LocalKafkaImage} {
		if vars[name] != want {
			t.Errorf("Makefile %s = %q, the provider uses %q", name, vars[name], want)
		}
	}
	df, err := os.ReadFile(filepath.Join(root, "deploy", "images", "kafka", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), "ARG BASE_IMAGE="+cluster.BaseImage+"\n") {
		t.Errorf("deploy/images/kafka/Dockerfile does not default BASE_IMAGE to %s", cluster.BaseImage)
	}
}

// TestKafkaEnv proves broker properties become the variable names the
// official image's KafkaDockerWrapper turns back into them.
func TestKafkaEnv(t *testing.T) {
	got := cluster.KafkaEnv(map[string]string{
		"node.id":                        "1",
		"listener.security.protocol.map": "A:PLAINTEXT",
		"log.dirs":                       "/d",
		"listener.name.client.scram-sha-256.sasl.jaas.config": "x",
		"some_prop.with_underscore":                           "y",
	})
	want := map[string]string{
		"KAFKA_NODE_ID":                        "1",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "A:PLAINTEXT",
		"KAFKA_LOG_DIRS":                       "/d",
		"KAFKA_LISTENER_NAME_CLIENT_SCRAM___SHA___256_SASL_JAAS_CONFIG": "x",
		"KAFKA_SOME__PROP_WITH__UNDERSCORE":                             "y",
	}
	if len(got) != len(want) {
		t.Errorf("KafkaEnv gave %d variables, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("KafkaEnv: %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// TestStartRejectsBadSpecs proves a bad spec or provider name is an error
// that names the field, not a panic or a silently different cluster.
func TestStartRejectsBadSpecs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		kind cluster.Kind
		spec cluster.Spec
		want string
	}{
		{cluster.InProcess, cluster.Spec{Name: "x", Brokers: 2}, "Brokers is 2"},
		{cluster.InProcess, cluster.Spec{Brokers: 1}, "Name is empty"},
		{cluster.InProcess, cluster.Spec{Name: "a b", Brokers: 1}, "must not contain spaces"},
		{"kraftless", cluster.Spec{Name: "x", Brokers: 1}, `unknown cluster provider "kraftless"`},
		{cluster.Testcontainers, cluster.Spec{Name: "x", Brokers: 1, ServerJVM: true}, "ServerJVM are not supported by the testcontainers provider"},
		{cluster.Testcontainers, cluster.Spec{Name: "x", Brokers: 1, Unproxied: true}, "Unproxied and ServerJVM are not supported"},
		{cluster.External, cluster.Spec{Name: "x", Brokers: 1, ServerJVM: true}, "ServerJVM is not supported by the external provider"},
	} {
		c, err := cluster.Start(ctx, tc.kind, tc.spec)
		if err == nil {
			c.Close()
			t.Errorf("Start(%s, %+v) succeeded, want error containing %q", tc.kind, tc.spec, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%s, %+v) = %v, want error containing %q", tc.kind, tc.spec, err, tc.want)
		}
	}
}

// TestExternalFromEnv proves the external provider reads its bootstrap
// servers and SASL settings from the environment and rejects an unknown
// SASL mechanism by naming the variable.
func TestExternalFromEnv(t *testing.T) {
	t.Setenv("REO_EXTERNAL_EXT_BOOTSTRAP_SERVERS", "127.0.0.1:1, 127.0.0.1:2")
	c, err := cluster.Start(context.Background(), cluster.External, cluster.Spec{Name: "ext", Brokers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Bootstrap(), ","); got != "127.0.0.1:1,127.0.0.1:2" {
		t.Fatalf("bootstrap = %s", got)
	}
	if c.Link(0) != nil {
		t.Fatal("external clusters are not proxied, yet Link returned a proxy")
	}
	t.Setenv("REO_EXTERNAL_EXT_SASL_MECHANISM", "GSSAPI")
	if _, err := cluster.Start(context.Background(), cluster.External, cluster.Spec{Name: "ext", Brokers: 1}); err == nil ||
		!strings.Contains(err.Error(), "REO_EXTERNAL_EXT_SASL_MECHANISM") {
		t.Fatalf("unknown SASL mechanism: err = %v, want it to name REO_EXTERNAL_EXT_SASL_MECHANISM", err)
	}
}
