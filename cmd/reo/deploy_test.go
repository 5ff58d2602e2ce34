package main

import (
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// There is no Docker engine or Kubernetes cluster in the test environment,
// so these tests read the deploy files and check that they agree with the
// binary: settings that exist, values it accepts, probes on its endpoints,
// paths that line up.

// dig walks nested maps and lists by key or index.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case nil:
		return ""
	default:
		return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(yamlString(x), "\n", " "), "  ", " "))
	}
}

func yamlString(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// TestKubernetesManifest proves deploy/kubernetes/reo.yaml runs 3 replicas
// whose instance id is the pod name, probes /readyz and /healthz on the
// metrics port reo listens on, scrapes that port, gives reo at least 15 s to
// stop, mounts the config and the password where the config says, and that
// its config is one reo accepts.
func TestKubernetesManifest(t *testing.T) {
	f, err := os.Open("../../deploy/kubernetes/reo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	docs := map[string]map[string]any{} // kind -> document
	dec := yaml.NewDecoder(f)
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("deploy/kubernetes/reo.yaml: %v", err)
		}
		if d != nil {
			docs[str(d["kind"])] = d
		}
	}
	for _, kind := range []string{"ConfigMap", "Secret", "Service", "StatefulSet"} {
		if docs[kind] == nil {
			t.Fatalf("deploy/kubernetes/reo.yaml has no %s", kind)
		}
	}
	ss := docs["StatefulSet"]
	pod := dig(ss, "spec", "template")
	c := dig(pod, "spec", "containers", "0")

	if n := dig(ss, "spec", "replicas"); n != 3 {
		t.Errorf("replicas = %v, want 3", n)
	}
	if g, _ := dig(pod, "spec", "terminationGracePeriodSeconds").(int); g < 15 {
		t.Errorf("terminationGracePeriodSeconds = %d, want at least 15", g)
	}
	var instanceFromPod bool
	for _, e := range dig(c, "env").([]any) {
		if str(dig(e, "name")) == "REO_INSTANCE_ID" && str(dig(e, "valueFrom", "fieldRef", "fieldPath")) == "metadata.name" {
			instanceFromPod = true
		}
	}
	if !instanceFromPod {
		t.Errorf("REO_INSTANCE_ID does not come from the pod name (fieldRef metadata.name)")
	}

	// The config reo will read.
	conf := str(dig(docs["ConfigMap"], "data", "reo.yaml"))
	s := &settings{values: map[string]string{}, from: map[string]string{}}
	if err := s.loadFile(writeFile(t, "reo.yaml", conf)); err != nil {
		t.Fatalf("the ConfigMap's reo.yaml: %v", err)
	}
	_, metricsPort, _ := strings.Cut(s.values["metrics-addr"], ":")

	// Probes and scraping target reo's metrics port.
	var portName string
	for _, p := range dig(c, "ports").([]any) {
		if str(dig(p, "containerPort")) == metricsPort {
			portName = str(dig(p, "name"))
		}
	}
	if portName == "" {
		t.Fatalf("no container port %s (metrics-addr %q)", metricsPort, s.values["metrics-addr"])
	}
	for probe, want := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
		if p, port := str(dig(c, probe, "httpGet", "path")), str(dig(c, probe, "httpGet", "port")); p != want || (port != portName && port != metricsPort) {
			t.Errorf("%s: GET %s on port %s, want %s on %s", probe, p, port, want, portName)
		}
	}
	ann := dig(pod, "metadata", "annotations")
	if str(dig(ann, "prometheus.io/scrape")) != "true" || str(dig(ann, "prometheus.io/port")) != metricsPort || str(dig(ann, "prometheus.io/path")) != "/metrics" {
		t.Errorf("prometheus annotations %v do not point at :%s/metrics", ann, metricsPort)
	}
	if dig(c, "resources", "limits", "memory") == nil || dig(c, "resources", "requests", "cpu") == nil {
		t.Errorf("container resources lack a memory limit or a cpu request: %v", dig(c, "resources"))
	}

	// --config points into the ConfigMap's mount; the password file into
	// the Secret's mount, under a key the Secret has.
	mounts := map[string]string{} // volume -> mount path
	for _, m := range dig(c, "volumeMounts").([]any) {
		mounts[str(dig(m, "name"))] = str(dig(m, "mountPath"))
	}
	volumes := map[string]any{}
	for _, v := range dig(pod, "spec", "volumes").([]any) {
		volumes[str(dig(v, "name"))] = v
	}
	args := strings.Join(func() []string {
		var out []string
		for _, a := range dig(c, "args").([]any) {
			out = append(out, str(a))
		}
		return out
	}(), " ")
	found := false
	for vol, mp := range mounts {
		if str(dig(volumes[vol], "configMap", "name")) == "reo-config" && args == "--config "+path.Join(mp, "reo.yaml") {
			found = true
		}
	}
	if !found {
		t.Errorf("args %q do not name reo.yaml in the reo-config mount (mounts %v)", args, mounts)
	}
	pw := s.values["source-sasl-password-file"]
	found = false
	for vol, mp := range mounts {
		secret := str(dig(volumes[vol], "secret", "secretName"))
		if secret == str(dig(docs["Secret"], "metadata", "name")) && path.Dir(pw) == mp && dig(docs["Secret"], "stringData", path.Base(pw)) != nil {
			found = true
		}
	}
	if !found {
		t.Errorf("source-sasl-password-file %s is not a key of the mounted Secret", pw)
	}
	if str(dig(pod, "spec", "securityContext", "runAsNonRoot")) != "true" {
		t.Errorf("the pod does not run as non-root")
	}
}

// TestDockerCompose proves docker-compose.yml gives reo only settings it
// knows, with values it accepts, and at least 15 s to stop.
func TestDockerCompose(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	reo := dig(doc, "services", "reo")
	known := map[string]bool{envConfig: true, "GOMEMLIMIT": true}
	for _, s := range settingsTable {
		known[s.env] = true
	}
	env := map[string]string{}
	for k, v := range dig(reo, "environment").(map[string]any) {
		if !known[k] {
			t.Errorf("docker-compose.yml sets %s, which reo does not read", k)
		}
		env[k] = str(v)
	}
	if _, err := parseSettings(nil, env, io.Discard); err != nil {
		t.Errorf("reo rejects docker-compose.yml's environment: %v", err)
	}
	if d, err := time.ParseDuration(str(dig(reo, "stop_grace_period"))); err != nil || d < 15*time.Second {
		t.Errorf("stop_grace_period %v, want at least 15s", dig(reo, "stop_grace_period"))
	}
	// The Kafka image is apache/kafka unless REO_KAFKA_IMAGE names another
	// (make images' reo/kafka where no registry is reachable).
	for _, svc := range []string{"source-kafka", "dest-kafka", "source-topics"} {
		if img := str(dig(doc, "services", svc, "image")); img != "${REO_KAFKA_IMAGE:-apache/kafka:4.4.0}" {
			t.Errorf("%s image %q, want ${REO_KAFKA_IMAGE:-apache/kafka:4.4.0}", svc, img)
		}
	}
}

// TestDockerfile proves the Dockerfile builds cmd/reo with the version
// stamped where main reads it, and runs `reo replicate` as non-root.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{"ARG GO_IMAGE=golang:1.26\n", "FROM ${GO_IMAGE} AS build", "-X main.version=", "./cmd/reo", "CGO_ENABLED=0",
		`ENTRYPOINT ["/usr/local/bin/reo", "replicate"]`, "USER 65532", `CMD ["/usr/local/bin/reo", "health"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if strings.Contains(df, "USER root") || strings.Contains(df, "USER 0") {
		t.Errorf("Dockerfile runs as root")
	}
	// Offline and with the classic builder: a syntax directive makes
	// BuildKit pull its frontend image (docker/dockerfile) even for the
	// prebuilt target, and RUN --mount is BuildKit's alone.
	for _, l := range strings.Split(df, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(strings.ToLower(strings.ReplaceAll(l, " ", "")), "#syntax=") {
			t.Errorf("Dockerfile has a syntax directive (%s): BuildKit pulls it, which fails without a registry", l)
		}
		if strings.Contains(l, "--mount=") {
			t.Errorf("Dockerfile uses RUN --mount (%s): the classic builder refuses it", l)
		}
	}
}
