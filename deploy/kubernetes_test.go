package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// manifest is one decoded document of a Kubernetes manifest file.
type manifest struct {
	kind string
	obj  any
}

// decodeManifests decodes every document of a multi-document manifest
// into the API type of its apiVersion and kind, strictly: a field the API
// does not have, or a value of the wrong type (a port name where a number
// goes, a malformed quantity), is an error naming the document.
func decodeManifests(b []byte) ([]manifest, error) {
	var out []manifest
	dec := yamlv3.NewDecoder(bytes.NewReader(b))
	for i := 1; ; i++ {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if doc == nil {
			continue
		}
		raw, err := yamlv3.Marshal(doc)
		if err != nil {
			return nil, err
		}
		gvk := fmt.Sprintf("%v/%v", doc["apiVersion"], doc["kind"])
		var obj any
		switch gvk {
		case "v1/ConfigMap":
			obj = &corev1.ConfigMap{}
		case "v1/Secret":
			obj = &corev1.Secret{}
		case "v1/Service":
			obj = &corev1.Service{}
		case "apps/v1/StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "policy/v1/PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		default:
			return nil, fmt.Errorf("document %d: %s is not a kind this test knows", i, gvk)
		}
		if err := yaml.UnmarshalStrict(raw, obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, gvk, err)
		}
		out = append(out, manifest{kind: fmt.Sprint(doc["kind"]), obj: obj})
	}
	return out, nil
}

// checkManifests applies the API server's checks that matter for these
// objects and that the types alone do not: names, selectors matching their
// pods, container ports and probe ports, mounts naming volumes, required
// fields.
func checkManifests(ms []manifest) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	name := func(kind, n string) {
		if n == "" {
			bad("%s has no metadata.name", kind)
		}
		for _, e := range validation.IsDNS1123Subdomain(n) {
			bad("%s name %q: %s", kind, n, e)
		}
	}
	var podLabels labels.Set
	for _, m := range ms {
		if ss, ok := m.obj.(*appsv1.StatefulSet); ok {
			podLabels = ss.Spec.Template.Labels
		}
	}
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *corev1.ConfigMap:
			name(m.kind, o.Name)
			for k := range o.Data {
				for _, e := range validation.IsConfigMapKey(k) {
					bad("ConfigMap key %q: %s", k, e)
				}
			}
		case *corev1.Secret:
			name(m.kind, o.Name)
		case *corev1.Service:
			name(m.kind, o.Name)
			if len(o.Spec.Ports) == 0 {
				bad("Service %s has no ports", o.Name)
			}
			sel := labels.SelectorFromSet(o.Spec.Selector)
			if podLabels == nil || sel.Empty() || !sel.Matches(podLabels) {
				bad("Service %s selector %v does not select the pods (%v)", o.Name, o.Spec.Selector, podLabels)
			}
		case *policyv1.PodDisruptionBudget:
			name(m.kind, o.Name)
			if o.Spec.Selector == nil || !labels.SelectorFromSet(o.Spec.Selector.MatchLabels).Matches(podLabels) {
				bad("PodDisruptionBudget %s does not select the pods", o.Name)
			}
		case *appsv1.StatefulSet:
			name(m.kind, o.Name)
			if o.Spec.ServiceName == "" {
				bad("StatefulSet %s has no serviceName", o.Name)
			}
			if o.Spec.Selector == nil || !labels.SelectorFromSet(o.Spec.Selector.MatchLabels).Matches(labels.Set(o.Spec.Template.Labels)) {
				bad("StatefulSet %s selector does not match its template's labels", o.Name)
			}
			pod := o.Spec.Template.Spec
			if len(pod.Containers) == 0 {
				bad("StatefulSet %s has no containers", o.Name)
			}
			volumes := map[string]bool{}
			for _, v := range pod.Volumes {
				volumes[v.Name] = true
			}
			for _, c := range pod.Containers {
				if c.Image == "" {
					bad("container %s has no image", c.Name)
				}
				for _, e := range validation.IsDNS1123Label(c.Name) {
					bad("container name %q: %s", c.Name, e)
				}
				ports := map[string]int32{}
				for _, p := range c.Ports {
					for _, e := range validation.IsValidPortNum(int(p.ContainerPort)) {
						bad("container %s port %d: %s", c.Name, p.ContainerPort, e)
					}
					if p.Name != "" {
						for _, e := range validation.IsValidPortName(p.Name) {
							bad("container %s port name %q: %s", c.Name, p.Name, e)
						}
						ports[p.Name] = p.ContainerPort
					}
				}
				for what, pr := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
					if pr == nil || pr.HTTPGet == nil {
						continue
					}
					if p := pr.HTTPGet.Port; p.StrVal != "" {
						if _, ok := ports[p.StrVal]; !ok {
							bad("container %s %s uses port %q, which it does not declare", c.Name, what, p.StrVal)
						}
					}
				}
				for _, vm := range c.VolumeMounts {
					if !volumes[vm.Name] {
						bad("container %s mounts volume %q, which the pod does not have", c.Name, vm.Name)
					}
				}
				if c.Resources.Limits.Memory().IsZero() {
					bad("container %s has no memory limit", c.Name)
				}
			}
		}
	}
	return errs
}

// TestKubernetesManifestSchema proves deploy/kubernetes/reo.yaml is valid
// against the Kubernetes API offline: every document decodes strictly into
// its API type (k8s.io/api: no unknown field, every value of the right
// type), and the cross-references the API server checks hold (names,
// selectors that select the pods, probe ports the container declares,
// mounts of existing volumes). It also proves the check can fail: the same
// manifest with a misspelt field, a port name where a number goes, or a
// probe on an undeclared port is rejected.
func TestKubernetesManifestSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("kubernetes", "reo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := decodeManifests(b)
	if err != nil {
		t.Fatalf("deploy/kubernetes/reo.yaml: %v", err)
	}
	kinds := map[string]int{}
	for _, m := range ms {
		kinds[m.kind]++
	}
	for _, k := range []string{"ConfigMap", "Secret", "Service", "StatefulSet", "PodDisruptionBudget"} {
		if kinds[k] != 1 {
			t.Errorf("deploy/kubernetes/reo.yaml has %d %s, want 1", kinds[k], k)
		}
	}
	for _, e := range checkManifests(ms) {
		t.Errorf("deploy/kubernetes/reo.yaml: %s", e)
	}

	src := string(b)
	for _, bad := range []struct{ name, from, to string }{
		{"misspelt field", "  serviceName: reo\n", "  serviceNmae: reo\n"},
		{"port name as number", "{name: metrics, containerPort: 9090}", "{name: metrics, containerPort: metrics}"},
		{"bad quantity", "limits: {memory: 448Mi}", "limits: {memory: 448MB-ish}"},
		{"probe on undeclared port", "httpGet: {path: /readyz, port: metrics}", "httpGet: {path: /readyz, port: metricz}"},
	} {
		if !strings.Contains(src, bad.from) {
			t.Fatalf("%s: the manifest no longer contains %q; update this test", bad.name, bad.from)
		}
		ms, err := decodeManifests([]byte(strings.Replace(src, bad.from, bad.to, 1)))
		if err == nil && len(checkManifests(ms)) == 0 {
			t.Errorf("a manifest with a %s (%q) passed the check", bad.name, bad.to)
		}
	}
}
