package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
)

// canonicalProps renders parsed properties as Java's Properties would hold
// them (the last value of a repeated key wins), sorted by key, with every
// character outside printable ASCII as a \uXXXX UTF-16 escape: the format
// in which the expected values below were printed by java.util.Properties
// (JDK 21) reading the same inputs.
func canonicalProps(ps []property) string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Key] = p.Value
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	q := func(s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			var units []rune
			if r >= 0x10000 {
				r -= 0x10000
				units = []rune{0xD800 + r>>10, 0xDC00 + r&0x3FF}
			} else {
				units = []rune{r}
			}
			for _, u := range units {
				if u < 32 || u > 126 || u == '"' || u == '\\' {
					fmt.Fprintf(&b, "\\u%04x", u)
				} else {
					b.WriteRune(u)
				}
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(q(k) + "=" + q(m[k]) + ";")
	}
	return b.String()
}

// TestPropertiesLikeJava proves parseProperties reads what
// java.util.Properties.load reads, on 48 inputs covering the separators
// (=, :, white space, none), white space around them and kept at the end
// of values, comment lines (# and !, never continued), '\' continuations
// (odd and even counts, leading white space of the next line dropped, a
// continued line starting with #), escapes (\t \n \r \f, \uXXXX with
// surrogate pairs, \= \: \space \#, unknown escapes), CR/LF/CRLF line
// ends, repeated keys and malformed \u escapes (which both refuse). The
// expected values are Java's own output.
func TestPropertiesLikeJava(t *testing.T) {
	for _, tc := range []struct{ in, java string }{
		{"a=b", "\"a\"=\"b\";"},
		{"a = b", "\"a\"=\"b\";"},
		{"a:b", "\"a\"=\"b\";"},
		{"a : b", "\"a\"=\"b\";"},
		{"a b", "\"a\"=\"b\";"},
		{"a    b  ", "\"a\"=\"b  \";"},
		{"a\t=\tb", "\"a\"=\"b\";"},
		{"a=", "\"a\"=\"\";"},
		{"a", "\"a\"=\"\";"},
		{"=b", "\"\"=\"b\";"},
		{":b", "\"\"=\"b\";"},
		{"a==b", "\"a\"=\"=b\";"},
		{"a=:b", "\"a\"=\":b\";"},
		{"a :=b", "\"a\"=\"=b\";"},
		{"a b=c", "\"a\"=\"b=c\";"},
		{"# c\na=b", "\"a\"=\"b\";"},
		{"! c\na=b", "\"a\"=\"b\";"},
		{"   # c\na=b", "\"a\"=\"b\";"},
		{"a=b # c", "\"a\"=\"b # c\";"},
		{"a=b \\# c", "\"a\"=\"b # c\";"},
		{"a=b\\\n   c", "\"a\"=\"bc\";"},
		{"a=b\\\\\nc=d", "\"a\"=\"b\\u005c\";\"c\"=\"d\";"},
		{"a=b\\\\\\\n  c", "\"a\"=\"b\\u005cc\";"},
		{"# c \\\na=b", "\"a\"=\"b\";"},
		{"a\\=b=c", "\"a=b\"=\"c\";"},
		{"a\\ b=c", "\"a b\"=\"c\";"},
		{"a\\:b=c", "\"a:b\"=\"c\";"},
		{"a=\\u0041\\u00e9", "\"a\"=\"A\\u00e9\";"},
		{"a=\\u004", "ERROR"},
		{"a=\\uZZZZ", "ERROR"},
		{"a=\\t\\n\\r\\f\\x\\\\", "\"a\"=\"\\u0009\\u000a\\u000d\\u000cx\\u005c\";"},
		{"a=b\r\nc=d\re=f", "\"a\"=\"b\";\"c\"=\"d\";\"e\"=\"f\";"},
		{"a=1\na=2", "\"a\"=\"2\";"},
		{"a=b\\", "\"a\"=\"b\";"},
		{"a\\\n  b=c", "\"ab\"=\"c\";"},
		{"a=b\\\n", "\"a\"=\"b\";"},
		{"  a  =  b  ", "\"a\"=\"b  \";"},
		{"a=\\ b", "\"a\"=\" b\";"},
		{"a=\\ud83d\\ude00", "\"a\"=\"\\ud83d\\ude00\";"},
		{"a=b#c", "\"a\"=\"b#c\";"},
		{"a=b\t#c", "\"a\"=\"b\\u0009#c\";"},
		{"a.b->c.d=e", "\"a.b->c.d\"=\"e\";"},
		{"x=\\\n\n  y", "\"x\"=\"\";\"y\"=\"\";"},
		{"k\\\n=v", "\"k\"=\"v\";"},
		{"a\\u003db=c", "\"a=b\"=\"c\";"},
		{"a=b\\\n  # c", "\"a\"=\"b# c\";"},
		{"\\#a=b", "\"#a\"=\"b\";"},
		{"a\\\n", "\"a\"=\"\";"},
	} {
		ps, err := parseProperties(tc.in)
		if tc.java == "ERROR" {
			if err == nil {
				t.Errorf("%q: Java refuses it, reo read %s", tc.in, canonicalProps(ps))
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v, Java reads %s", tc.in, err, tc.java)
			continue
		}
		if got := canonicalProps(ps); got != tc.java {
			t.Errorf("%q: reo reads %s, Java %s", tc.in, got, tc.java)
		}
	}
}

// TestPropertiesLinesAndComments proves each entry carries the line it
// starts on (continuations and CRLF counted), that a " #" after a value
// is flagged as a would-be comment at the right offset while the value
// keeps it (Java has no trailing comments), and that "\#", a '#' without
// white space before it and a '#' at the start of a value are not
// flagged; non-ASCII values are marked.
func TestPropertiesLinesAndComments(t *testing.T) {
	src := "# header\r\n\r\nclusters = a, b\r\ntopics = .* # all\r\ngroups = x\\\n   y  # c\nlit = a \\# b\nnospace = a#b\nhash = # only\npw = p\u00e9\n"
	ps, err := parseProperties(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key, value string
		line       int
		commentAt  int
		nonASCII   bool
	}{
		{"clusters", "a, b", 3, -1, false},
		{"topics", ".* # all", 4, 2, false},
		{"groups", "xy  # c", 5, 2, false},
		{"lit", "a # b", 7, -1, false},
		{"nospace", "a#b", 8, -1, false},
		{"hash", "# only", 9, -1, false},
		{"pw", "p\u00e9", 10, -1, true},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d entries %+v, want %d", len(ps), ps, len(want))
	}
	for i, w := range want {
		p := ps[i]
		if p.Key != w.key || p.Value != w.value || p.Line != w.line || p.CommentAt != w.commentAt || p.NonASCII != w.nonASCII {
			t.Errorf("entry %d = %+v, want %+v", i, p, w)
		}
	}
}

// TestPropertiesEscapeErrorQuotesNoValue proves a malformed \uXXXX escape
// is refused with the line and the key, quoting none of the value's text:
// the value may be a password (sasl.jaas.config), whether the escape runs
// short, holds non-hexadecimal digits or ends the value; an escape in a
// key is refused with its line.
func TestPropertiesEscapeErrorQuotesNoValue(t *testing.T) {
	for _, v := range []string{`s3\uZZcret-TAIL`, `s3cret-TAIL\u12`, `s3cret-TAIL\u`} {
		_, err := parseProperties("clusters = A, B\nA.sasl.jaas.config = m required password=\"" + v + "\";\n")
		if err == nil || !strings.HasPrefix(err.Error(), `line 2: A.sasl.jaas.config: in the value: malformed \uXXXX escape`) {
			t.Errorf("value %s: error %v, want one naming line 2 and the key", v, err)
		}
		if err != nil && (strings.Contains(err.Error(), "ZZ") || strings.Contains(err.Error(), "cret") || strings.Contains(err.Error(), "TAIL") || strings.Contains(err.Error(), "12")) {
			t.Errorf("value %s: the error quotes the value: %v", v, err)
		}
	}
	if _, err := parseProperties("a\\u12=b\n"); err == nil || !strings.HasPrefix(err.Error(), `line 1: in the key: malformed \uXXXX escape`) {
		t.Errorf("escape in a key: error %v, want one naming line 1 and the key", err)
	}

	path := writeMM2(t, "clusters = A, B", "A.bootstrap.servers = a:9092", "B.bootstrap.servers = b:9092", "A->B.enabled = true",
		"A.security.protocol = SASL_PLAINTEXT", "A.sasl.mechanism = PLAIN",
		`A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3\uZZcret-TAIL";`)
	var errb bytes.Buffer
	code := run(context.Background(), []string{"replicate", "--mm2-config", path}, nil, io.Discard, &errb)
	if code != 2 || !strings.Contains(errb.String(), path+" line 7: A.sasl.jaas.config: in the value: malformed") {
		t.Errorf("exit code %d, stderr %s; want 2 naming line 7 and the key", code, errb.String())
	}
	assertNoSecret(t, "the error", errb.String(), "ZZcr", "TAIL")
}
