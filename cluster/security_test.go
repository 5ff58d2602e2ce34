package cluster

import (
	"strconv"
	"strings"
	"testing"
)

// TestSecureListenerProps proves the broker properties a SecureListener
// adds (no JVM is started): the SECURE listener on its own port, in the
// listener and protocol maps; the PEM keystore; client certificates
// required with ClientCAs; the SASL mechanisms with PLAIN users (quoted
// for JAAS) and SCRAM; the port kept when the config is written again; and
// that inconsistent listeners are refused.
func TestSecureListenerProps(t *testing.T) {
	sec := &SecureListener{Protocol: "SASL_SSL", KeystorePEM: "/k.pem", ClientCAs: "/ca.pem",
		Mechanisms: []string{"PLAIN", "SCRAM-SHA-512"}, PlainUsers: map[string]string{"b": `p"w\`, "a": "x"}}
	l := &local{sec: sec}
	n := &node{}
	props := brokerProps(1)
	props["listeners"] = "CLIENT://127.0.0.1:1,INTERNAL://127.0.0.1:2,CONTROLLER://127.0.0.1:3"
	props["advertised.listeners"] = "CLIENT://127.0.0.1:1,INTERNAL://127.0.0.1:2"
	if err := l.addSecureListener(n, props); err != nil {
		t.Fatal(err)
	}
	if n.secure == 0 {
		t.Fatal("no port picked for the SECURE listener")
	}
	port := n.secure
	secure := "SECURE://127.0.0.1:" + strconv.Itoa(port)
	for k, want := range map[string]string{
		"listeners":                              "CLIENT://127.0.0.1:1,INTERNAL://127.0.0.1:2,CONTROLLER://127.0.0.1:3," + secure,
		"advertised.listeners":                   "CLIENT://127.0.0.1:1,INTERNAL://127.0.0.1:2," + secure,
		"listener.security.protocol.map":         "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,SECURE:SASL_SSL",
		"listener.name.secure.ssl.keystore.type": "PEM", "listener.name.secure.ssl.keystore.location": "/k.pem",
		"listener.name.secure.ssl.client.auth": "required", "listener.name.secure.ssl.truststore.location": "/ca.pem",
		"listener.name.secure.sasl.enabled.mechanisms":        "PLAIN,SCRAM-SHA-512",
		"listener.name.secure.plain.sasl.jaas.config":         `org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x" user_b="p\"w\\";`,
		"listener.name.secure.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
	} {
		if props[k] != want {
			t.Errorf("%s = %q, want %q", k, props[k], want)
		}
	}
	props2 := map[string]string{}
	if err := l.addSecureListener(n, props2); err != nil || n.secure != port || !strings.Contains(props2["listeners"], secure) {
		t.Errorf("rewriting the config moved the SECURE listener: %v %d %q", err, n.secure, props2["listeners"])
	}
	for _, bad := range []SecureListener{
		{Protocol: "TLS"}, {Protocol: "SSL"}, {Protocol: "SASL_SSL", KeystorePEM: "/k"},
		{Protocol: "SASL_PLAINTEXT", ClientCAs: "/ca", Mechanisms: []string{"PLAIN"}}, {Protocol: "SASL_PLAINTEXT", Mechanisms: []string{"GSSAPI"}},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
