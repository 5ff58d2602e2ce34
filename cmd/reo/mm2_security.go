package main

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/pbkdf2"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/reo-kafka/reo/internal/flaglist"
	"software.sslmate.com/src/go-pkcs12"
)

// ---- config providers: ${env:VAR}, ${file:path:key}, ${dir:path:file} ----

// Config provider classes reo implements, as Kafka ships them.
const (
	envProviderClass  = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	fileProviderClass = "org.apache.kafka.common.config.provider.FileConfigProvider"
	dirProviderClass  = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
)

// configVarRE is Kafka's ConfigTransformer pattern: ${provider:[path:]key}.
var configVarRE = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// configProvider is one entry of config.providers.
type configProvider struct {
	name, class string
	line        int
	params      map[string]string // config.providers.<name>.param.<k>
}

// resolveVars replaces every ${provider:[path:]key} in v, as MirrorMaker 2
// does with the providers config.providers declares. Unlike MirrorMaker 2,
// which leaves a reference it cannot resolve as it is (and then uses the
// text "${env:X}" as, say, a password), reo refuses one: an undeclared
// provider, a missing variable, file or key.
func resolveVars(v string, providers map[string]*configProvider, env map[string]string) (string, error) {
	var firstErr error
	out := configVarRE.ReplaceAllStringFunc(v, func(m string) string {
		if firstErr != nil {
			return m
		}
		g := configVarRE.FindStringSubmatch(m)
		name, path, key := g[1], g[3], g[4]
		p, ok := providers[name]
		if !ok {
			class := fileProviderClass
			switch name {
			case "env":
				class = envProviderClass
			case "dir":
				class = dirProviderClass
			}
			firstErr = fmt.Errorf("%s names config provider %q, which config.providers does not declare (MirrorMaker 2 would keep the text as it is): add config.providers=%s and config.providers.%s.class=%s",
				m, name, name, name, class)
			return m
		}
		val, err := p.get(path, key, env)
		if err != nil {
			firstErr = fmt.Errorf("%s: %w", m, err)
			return m
		}
		return val
	})
	return out, firstErr
}

// get resolves one reference with provider p.
func (p *configProvider) get(path, key string, env map[string]string) (string, error) {
	allowed := func(path string) error {
		list := p.params["allowed.paths"]
		if list == "" {
			return nil
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		for _, a := range flaglist.Split(list) {
			if abs == a || strings.HasPrefix(abs, strings.TrimSuffix(a, "/")+"/") {
				return nil
			}
		}
		return fmt.Errorf("path %s is outside config.providers.%s.param.allowed.paths (%s)", path, p.name, list)
	}
	switch p.class {
	case envProviderClass:
		if path != "" {
			return "", fmt.Errorf("the environment provider takes no path: write ${%s:VARIABLE}", p.name)
		}
		if pat := p.params["allowlist.pattern"]; pat != "" {
			re, err := regexp.Compile("^(?:" + pat + ")$")
			if err != nil {
				return "", fmt.Errorf("config.providers.%s.param.allowlist.pattern %q is not a regular expression: %v", p.name, pat, err)
			}
			if !re.MatchString(key) {
				return "", fmt.Errorf("environment variable %s is not allowed by config.providers.%s.param.allowlist.pattern", key, p.name)
			}
		}
		val, ok := env[key]
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", key)
		}
		return val, nil
	case fileProviderClass:
		if path == "" {
			return "", fmt.Errorf("the file provider needs a path and a key: ${%s:/path/to/file.properties:key}", p.name)
		}
		if err := allowed(path); err != nil {
			return "", err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read %s: %v", path, err)
		}
		props, err := parseProperties(string(b))
		if err != nil {
			return "", fmt.Errorf("read %s: %v", path, err)
		}
		val, found := "", false
		for _, pr := range props {
			if pr.Key == key {
				val, found = pr.Value, true
			}
		}
		if !found {
			return "", fmt.Errorf("%s has no key %s", path, key)
		}
		return val, nil
	case dirProviderClass:
		if path == "" {
			return "", fmt.Errorf("the directory provider needs a directory and a file: ${%s:/path/to/dir:file}", p.name)
		}
		file := filepath.Join(path, key)
		if err := allowed(file); err != nil {
			return "", err
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read %s: %v", file, err)
		}
		return string(b), nil
	}
	return "", fmt.Errorf("config provider %s has class %q: reo implements %s, %s and %s only", p.name, p.class, envProviderClass, fileProviderClass, dirProviderClass)
}

// ---- sasl.jaas.config ----

// jaasEntry is the one login module of a sasl.jaas.config value.
type jaasEntry struct {
	module, flag string
	options      map[string]string
}

// Login modules reo understands.
const (
	plainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

type jaasToken struct {
	kind byte // 'w' word, 'q' quoted, 'o' ordinary character, 0 EOF
	s    string
	c    rune
}

// jaasTokenizer reads a JAAS configuration the way Kafka's JaasConfig sets
// up java.io.StreamTokenizer: bytes 0-32 are white space; '/' starts a
// comment to the end of the line, as do "//" and "/* ... */"; double and
// single quotes delimit strings (with Java's escapes; a string also ends at
// the end of a line); ";" and "=" are tokens of their own; every other
// character from 33 to 128 and from 160 up is part of a word.
type jaasTokenizer struct {
	s string
	i int
}

func jaasWordChar(r rune) bool {
	switch {
	case r == ';' || r == '=' || r == '/' || r == '"' || r == '\'':
		return false
	case r > ' ' && r <= 128, r >= 160:
		return true
	}
	return false
}

func (t *jaasTokenizer) next() jaasToken {
	for t.i < len(t.s) {
		r, n := utf8.DecodeRuneInString(t.s[t.i:])
		switch {
		case r <= ' ':
			t.i += n
		case r == '/':
			if strings.HasPrefix(t.s[t.i:], "/*") {
				end := strings.Index(t.s[t.i+2:], "*/")
				if end < 0 {
					t.i = len(t.s)
				} else {
					t.i += 2 + end + 2
				}
				continue
			}
			// "//" or a lone '/': a comment to the end of the line.
			end := strings.IndexAny(t.s[t.i:], "\r\n")
			if end < 0 {
				t.i = len(t.s)
			} else {
				t.i += end
			}
		case r == '"' || r == '\'':
			t.i += n
			var b strings.Builder
			for t.i < len(t.s) {
				c, n := utf8.DecodeRuneInString(t.s[t.i:])
				if c == r {
					t.i += n
					break
				}
				if c == '\n' || c == '\r' {
					break
				}
				t.i += n
				if c != '\\' || t.i >= len(t.s) {
					b.WriteRune(c)
					continue
				}
				e, en := utf8.DecodeRuneInString(t.s[t.i:])
				t.i += en
				switch e {
				case 'a':
					b.WriteByte(7)
				case 'b':
					b.WriteByte('\b')
				case 'f':
					b.WriteByte('\f')
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case 'v':
					b.WriteByte('\v')
				default:
					if e >= '0' && e <= '7' {
						// Octal: up to three digits, the first at most 3
						// for three.
						v := int(e - '0')
						maxDigits := 2
						if e > '3' {
							maxDigits = 1
						}
						for k := 0; k < maxDigits && t.i < len(t.s) && t.s[t.i] >= '0' && t.s[t.i] <= '7'; k++ {
							v = v*8 + int(t.s[t.i]-'0')
							t.i++
						}
						b.WriteRune(rune(v))
					} else {
						b.WriteRune(e)
					}
				}
			}
			return jaasToken{kind: 'q', s: b.String()}
		case r >= '0' && r <= '9' || r == '.' || r == '-':
			// StreamTokenizer still parses numbers here: a number token
			// has no string, so it cannot be an option value.
			t.i += n
			if r == '-' && (t.i >= len(t.s) || !(t.s[t.i] == '.' || t.s[t.i] >= '0' && t.s[t.i] <= '9')) {
				return jaasToken{kind: 'o', c: '-'}
			}
			dot := r == '.'
			for t.i < len(t.s) && (t.s[t.i] >= '0' && t.s[t.i] <= '9' || t.s[t.i] == '.' && !dot) {
				dot = dot || t.s[t.i] == '.'
				t.i++
			}
			return jaasToken{kind: 'n'}
		case jaasWordChar(r):
			start := t.i
			for t.i < len(t.s) {
				c, n := utf8.DecodeRuneInString(t.s[t.i:])
				if !jaasWordChar(c) {
					break
				}
				t.i += n
			}
			return jaasToken{kind: 'w', s: t.s[start:t.i]}
		default:
			t.i += n
			return jaasToken{kind: 'o', c: r}
		}
	}
	return jaasToken{}
}

func (tk jaasToken) hasString() bool { return tk.kind == 'w' || tk.kind == 'q' }

// what names a token in a message without its text (it may be a secret).
// A character (';', '=') is quoted unless it may be part of a value:
// afterValue says an unquoted value came before it.
func (tk jaasToken) what(afterValue bool) string {
	switch {
	case tk.kind == 'n':
		return "a number (write it in quotes)"
	case tk.kind == 'o' && !afterValue:
		return fmt.Sprintf("%q", tk.c)
	case tk.kind == 'o':
		return "a punctuation character"
	}
	return "a word"
}

// parseJAAS parses a sasl.jaas.config value as Kafka does:
// "<LoginModuleClass> <controlFlag> (<option>=<value>)*;", exactly one
// login module. Errors never quote option values (they hold passwords),
// nor any text that may be part of one: once an option's value was an
// unquoted word, or a quoted one with text right after its closing quote,
// what follows may be the rest of it (password=correct horse battery,
// password="pa"ss"), so options are then named by their place ("option
// 3"), and a later entry's module and control flag are not quoted.
func parseJAAS(s string) (jaasEntry, error) {
	t := &jaasTokenizer{s: s}
	var entries []jaasEntry
	afterValue := false // what follows may be part of a value before it
	const hidden = "not shown: it follows a value, of which it may be part; quote values that hold a space, a quote, ';' or '='"
	for tk := t.next(); tk.kind != 0; tk = t.next() {
		if !tk.hasString() {
			return jaasEntry{}, fmt.Errorf("expected a login module class name, found %s", tk.what(afterValue))
		}
		e := jaasEntry{module: tk.s, options: map[string]string{}}
		module := e.module
		if afterValue {
			module = fmt.Sprintf("login module %d (its class name is %s)", len(entries)+1, hidden)
		}
		fl := t.next()
		if fl.kind == 0 {
			if afterValue {
				return jaasEntry{}, fmt.Errorf("login module control flag not specified after %s", module)
			}
			return jaasEntry{}, fmt.Errorf("login module control flag not specified after %s (write %s required ...;)", module, e.module)
		}
		switch strings.ToUpper(fl.s) {
		case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
			e.flag = strings.ToLower(fl.s)
		default:
			what := fmt.Sprintf("%q", fl.s)
			if !fl.hasString() || afterValue {
				what = fl.what(afterValue)
			}
			return jaasEntry{}, fmt.Errorf("invalid login module control flag %s after %s: want required, requisite, sufficient or optional", what, module)
		}
		var k jaasToken
		for n := 1; ; n++ {
			if k = t.next(); k.kind == 0 || k.kind == 'o' && k.c == ';' {
				break
			}
			if !k.hasString() {
				return jaasEntry{}, fmt.Errorf("expected an option name in %s, found %s", module, k.what(afterValue))
			}
			option, note := fmt.Sprintf("%q", k.s), ""
			if afterValue {
				option, note = strconv.Itoa(n), "; its name is "+hidden
			}
			eq := t.next()
			if eq.kind != 'o' || eq.c != '=' {
				return jaasEntry{}, fmt.Errorf("value not specified for option %s of %s (options are name=\"value\"; the entry ends with ';'%s)", option, module, note)
			}
			v := t.next()
			if !v.hasString() {
				return jaasEntry{}, fmt.Errorf("value not specified for option %s of %s (found %s%s)", option, module, v.what(afterValue), note)
			}
			e.options[k.s] = v.s
			// Text right after a closing quote (no space or ';')
			// may be the rest of a value that held a quote.
			glued := v.kind != 'w' && t.i < len(t.s) && t.s[t.i] > ' ' && t.s[t.i] != ';'
			afterValue = afterValue || v.kind == 'w' || glued
		}
		if k.kind == 0 {
			return jaasEntry{}, fmt.Errorf("the entry of %s is not terminated by ';'", module)
		}
		entries = append(entries, e)
	}
	switch len(entries) {
	case 0:
		return jaasEntry{}, errors.New("no login module (expected e.g. " + plainLoginModule + ` required username="..." password="...";)`)
	case 1:
		return entries[0], nil
	}
	return jaasEntry{}, fmt.Errorf("%d login modules, Kafka takes exactly one (text after the first ';' is another module: a trailing # comment? Java properties have none)", len(entries))
}

// ---- TLS stores: JKS, PKCS12, PEM ----

const jksMagic = 0xFEEDFEED

// storeFormat tells a key store's format from its bytes: "JKS", "JCEKS",
// "PKCS12", "PEM" or "".
func storeFormat(b []byte) string {
	switch {
	case len(b) >= 4 && binary.BigEndian.Uint32(b) == jksMagic:
		return "JKS"
	case len(b) >= 4 && binary.BigEndian.Uint32(b) == 0xCECECECE:
		return "JCEKS"
	case bytes.Contains(b, []byte("-----BEGIN ")):
		return "PEM"
	case len(b) > 0 && b[0] == 0x30:
		return "PKCS12"
	}
	return ""
}

// storeError is a key store problem; field names the key to fix
// (ssl.truststore.location, ssl.truststore.password, ...).
type storeError struct {
	field string
	msg   string
}

func (e *storeError) Error() string { return e.msg }

// readStore reads a JKS, PKCS12 or PEM store file and checks its format
// against the declared type. Like the JDK, a JKS or PKCS12 type reads
// either binary format.
func readStore(kind, location, typ string) ([]byte, string, error) {
	b, err := os.ReadFile(location)
	if err != nil {
		return nil, "", &storeError{"ssl." + kind + ".location", fmt.Sprintf("cannot read %s %s: %v", kind, location, err)}
	}
	f := storeFormat(b)
	switch {
	case f == "JCEKS":
		return nil, "", &storeError{"ssl." + kind + ".type", fmt.Sprintf("%s is a JCEKS keystore, which reo cannot read: convert it with keytool -importkeystore -deststoretype PKCS12", location)}
	case typ == "PEM" && f != "PEM":
		return nil, "", &storeError{"ssl." + kind + ".type", fmt.Sprintf("ssl.%s.type is PEM but %s is not a PEM file (it looks like %s: set ssl.%s.type=%s)", kind, location, orWord(f, "binary data"), kind, orWord(f, "JKS"))}
	case typ != "PEM" && f == "PEM":
		return nil, "", &storeError{"ssl." + kind + ".type", fmt.Sprintf("ssl.%s.type is %s but %s is a PEM file: set ssl.%s.type=PEM", kind, typ, location, kind)}
	case f == "":
		return nil, "", &storeError{"ssl." + kind + ".location", fmt.Sprintf("%s is not a JKS, PKCS12 or PEM %s", location, kind)}
	}
	return b, f, nil
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// loadTrustStore returns the CA certificates of a truststore (a file, or
// PEM text from ssl.truststore.certificates). A JKS store is checked with
// its password when one is given (as Java does; without one, Java and reo
// read it unchecked); a PKCS12 store needs its password unless it has
// none.
func loadTrustStore(location, typ, password, inline string) (*x509.CertPool, int, error) {
	var certs []*x509.Certificate
	switch {
	case inline != "":
		if typ != "PEM" {
			return nil, 0, &storeError{"ssl.truststore.type", "ssl.truststore.certificates needs ssl.truststore.type=PEM"}
		}
		cs, err := pemCerts([]byte(inline))
		if err != nil || len(cs) == 0 {
			return nil, 0, &storeError{"ssl.truststore.certificates", "ssl.truststore.certificates holds no PEM certificate"}
		}
		certs = cs
	default:
		b, f, err := readStore("truststore", location, typ)
		if err != nil {
			return nil, 0, err
		}
		switch f {
		case "PEM":
			cs, err := pemCerts(b)
			if err != nil || len(cs) == 0 {
				return nil, 0, &storeError{"ssl.truststore.location", fmt.Sprintf("%s holds no PEM certificate", location)}
			}
			certs = cs
		case "JKS":
			ks := keystore.New()
			err := ks.Load(bytes.NewReader(b), []byte(password))
			if err != nil && (password != "" || !strings.Contains(err.Error(), "invalid digest")) {
				if strings.Contains(err.Error(), "invalid digest") {
					return nil, 0, &storeError{"ssl.truststore.password", fmt.Sprintf("wrong password for truststore %s (the JKS integrity check failed)", location)}
				}
				return nil, 0, &storeError{"ssl.truststore.location", fmt.Sprintf("cannot read JKS truststore %s: %v", location, err)}
			}
			for _, a := range ks.Aliases() {
				if e, err := ks.GetTrustedCertificateEntry(a); err == nil {
					if c, err := x509.ParseCertificate(e.Certificate.Content); err == nil {
						certs = append(certs, c)
					}
				}
			}
		case "PKCS12":
			cs, err := pkcs12.DecodeTrustStore(b, password)
			if errors.Is(err, pkcs12.ErrIncorrectPassword) {
				if password == "" {
					return nil, 0, &storeError{"ssl.truststore.password", fmt.Sprintf("PKCS12 truststore %s needs its password: set ssl.truststore.password", location)}
				}
				return nil, 0, &storeError{"ssl.truststore.password", fmt.Sprintf("wrong password for truststore %s (the PKCS12 integrity check failed)", location)}
			}
			if err != nil {
				return nil, 0, &storeError{"ssl.truststore.location", fmt.Sprintf("cannot read PKCS12 truststore %s: %v", location, err)}
			}
			certs = cs
		}
		if len(certs) == 0 {
			return nil, 0, &storeError{"ssl.truststore.location", fmt.Sprintf("truststore %s holds no trusted certificate", location)}
		}
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, len(certs), nil
}

func pemCerts(b []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out, nil
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

// loadKeyStore returns the client certificate and key of a keystore (a
// file, or PEM text from ssl.keystore.key and
// ssl.keystore.certificate.chain). The key's password is
// ssl.key.password, or the store's password when that is not set, as in
// Kafka.
func loadKeyStore(location, typ, storePassword, keyPassword, inlineKey, inlineChain string) (*tls.Certificate, error) {
	if keyPassword == "" {
		keyPassword = storePassword
	}
	var keyPEM, chainPEM []byte
	switch {
	case inlineKey != "" || inlineChain != "":
		if typ != "PEM" {
			return nil, &storeError{"ssl.keystore.type", "ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type=PEM"}
		}
		if inlineKey == "" || inlineChain == "" {
			return nil, &storeError{"ssl.keystore.key", "ssl.keystore.key and ssl.keystore.certificate.chain go together: set both"}
		}
		keyPEM, chainPEM = []byte(inlineKey), []byte(inlineChain)
	default:
		b, f, err := readStore("keystore", location, typ)
		if err != nil {
			return nil, err
		}
		switch f {
		case "PEM":
			keyPEM, chainPEM = b, b
		case "JKS":
			ks := keystore.New()
			if err := ks.Load(bytes.NewReader(b), []byte(storePassword)); err != nil {
				if strings.Contains(err.Error(), "invalid digest") {
					return nil, &storeError{"ssl.keystore.password", fmt.Sprintf("wrong password for keystore %s (the JKS integrity check failed)", location)}
				}
				return nil, &storeError{"ssl.keystore.location", fmt.Sprintf("cannot read JKS keystore %s: %v", location, err)}
			}
			for _, a := range ks.Aliases() {
				if !ks.IsPrivateKeyEntry(a) {
					continue
				}
				e, err := ks.GetPrivateKeyEntry(a, []byte(keyPassword))
				if err != nil {
					return nil, &storeError{"ssl.key.password", fmt.Sprintf("cannot decrypt the key %q of keystore %s: wrong ssl.key.password? (%v)", a, location, err)}
				}
				key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
				if err != nil {
					return nil, &storeError{"ssl.keystore.location", fmt.Sprintf("key %q of keystore %s: %v", a, location, err)}
				}
				cert := &tls.Certificate{PrivateKey: key}
				for _, c := range e.CertificateChain {
					cert.Certificate = append(cert.Certificate, c.Content)
				}
				return checkKeyPair(cert, location)
			}
			return nil, &storeError{"ssl.keystore.location", fmt.Sprintf("keystore %s holds no private key entry", location)}
		case "PKCS12":
			key, leaf, cas, err := pkcs12.DecodeChain(b, storePassword)
			if errors.Is(err, pkcs12.ErrIncorrectPassword) {
				return nil, &storeError{"ssl.keystore.password", fmt.Sprintf("wrong password for keystore %s (the PKCS12 integrity check failed)", location)}
			}
			if err != nil {
				return nil, &storeError{"ssl.keystore.location", fmt.Sprintf("cannot read PKCS12 keystore %s: %v", location, err)}
			}
			cert := &tls.Certificate{PrivateKey: key, Certificate: [][]byte{leaf.Raw}}
			for _, c := range cas {
				cert.Certificate = append(cert.Certificate, c.Raw)
			}
			return checkKeyPair(cert, location)
		}
	}
	// PEM: a PKCS#8 key (encrypted with ssl.key.password, or not) and the
	// certificate chain, in one file or two values.
	var key crypto.PrivateKey
	var chain [][]byte
	for rest := keyPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		var err error
		switch blk.Type {
		case "ENCRYPTED PRIVATE KEY":
			if keyPassword == "" {
				return nil, &storeError{"ssl.key.password", "the keystore's private key is encrypted: set ssl.key.password"}
			}
			var der []byte
			if der, err = decryptPKCS8(blk.Bytes, keyPassword); err == nil {
				key, err = x509.ParsePKCS8PrivateKey(der)
			}
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(blk.Bytes)
		}
		if err != nil {
			field := "ssl.keystore.location"
			if blk.Type == "ENCRYPTED PRIVATE KEY" {
				field = "ssl.key.password"
			}
			return nil, &storeError{field, fmt.Sprintf("the keystore's private key: %v", err)}
		}
	}
	for rest := chainPEM; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			chain = append(chain, blk.Bytes)
		}
	}
	if key == nil || len(chain) == 0 {
		return nil, &storeError{"ssl.keystore.location", fmt.Sprintf("keystore %s needs a PKCS#8 private key and its certificate chain in PEM", orWord(location, "(ssl.keystore.key)"))}
	}
	return checkKeyPair(&tls.Certificate{PrivateKey: key, Certificate: chain}, orWord(location, "ssl.keystore.key"))
}

// checkKeyPair checks that the key matches the leaf certificate.
func checkKeyPair(c *tls.Certificate, where string) (*tls.Certificate, error) {
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		return nil, &storeError{"ssl.keystore.location", fmt.Sprintf("keystore %s: %v", where, err)}
	}
	type pub interface{ Equal(crypto.PublicKey) bool }
	var match bool
	switch k := c.PrivateKey.(type) {
	case *rsa.PrivateKey:
		match = k.PublicKey.Equal(leaf.PublicKey)
	case *ecdsa.PrivateKey:
		match = k.PublicKey.Equal(leaf.PublicKey)
	case ed25519.PrivateKey:
		match = k.Public().(pub).Equal(leaf.PublicKey)
	}
	if !match {
		return nil, &storeError{"ssl.keystore.location", fmt.Sprintf("keystore %s: the private key does not belong to the first certificate", where)}
	}
	c.Leaf = leaf
	return c, nil
}

// PKCS#8 encryption (RFC 8018 PBES2 with PBKDF2), as openssl pkcs8 -topk8
// writes it: AES-128/192/256-CBC or DES-EDE3-CBC, HMAC-SHA1/224/256/384/512.
var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type pkcs8Encrypted struct {
	Algo struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.RawValue
	}
	Data []byte
}

type pbes2Params struct {
	KDF struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.RawValue
	}
	Cipher struct {
		Algorithm asn1.ObjectIdentifier
		IV        []byte
	}
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int `asn1:"optional"`
	PRF        struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.RawValue `asn1:"optional"`
	} `asn1:"optional"`
}

func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var enc pkcs8Encrypted
	if _, err := asn1.Unmarshal(der, &enc); err != nil {
		return nil, fmt.Errorf("not an encrypted PKCS#8 key: %v", err)
	}
	if !enc.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("encrypted with %v, reo reads PBES2 (openssl pkcs8 -topk8 -v2 aes256) only", enc.Algo.Algorithm)
	}
	var p pbes2Params
	if _, err := asn1.Unmarshal(enc.Algo.Parameters.FullBytes, &p); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %v", err)
	}
	if !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v is not PBKDF2", p.KDF.Algorithm)
	}
	var kp pbkdf2Params
	if _, err := asn1.Unmarshal(p.KDF.Parameters.FullBytes, &kp); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %v", err)
	}
	var h func() hash.Hash
	switch prf := kp.PRF.Algorithm; {
	case len(prf) == 0 || prf.Equal(oidHMACSHA1):
		h = sha1.New
	case prf.Equal(oidHMACSHA224):
		h = sha256.New224
	case prf.Equal(oidHMACSHA256):
		h = sha256.New
	case prf.Equal(oidHMACSHA384):
		h = sha512.New384
	case prf.Equal(oidHMACSHA512):
		h = sha512.New
	default:
		return nil, fmt.Errorf("PBKDF2 pseudo-random function %v is not supported", prf)
	}
	var keyLen int
	var newCipher func([]byte) (cipher.Block, error)
	switch c := p.Cipher.Algorithm; {
	case c.Equal(oidAES128CBC):
		keyLen, newCipher = 16, aes.NewCipher
	case c.Equal(oidAES192CBC):
		keyLen, newCipher = 24, aes.NewCipher
	case c.Equal(oidAES256CBC):
		keyLen, newCipher = 32, aes.NewCipher
	case c.Equal(oidDESEDE3CBC):
		keyLen, newCipher = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("cipher %v is not supported (AES-CBC and DES-EDE3-CBC are)", c)
	}
	key, err := pbkdf2.Key(h, password, kp.Salt, kp.Iterations, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := newCipher(key)
	if err != nil {
		return nil, err
	}
	if len(p.Cipher.IV) != block.BlockSize() || len(enc.Data) == 0 || len(enc.Data)%block.BlockSize() != 0 {
		return nil, errors.New("malformed encrypted key")
	}
	out := make([]byte, len(enc.Data))
	cipher.NewCBCDecrypter(block, p.Cipher.IV).CryptBlocks(out, enc.Data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > block.BlockSize() || !bytes.Equal(out[len(out)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, errors.New("cannot decrypt the private key: wrong ssl.key.password")
	}
	return out[:len(out)-pad], nil
}
