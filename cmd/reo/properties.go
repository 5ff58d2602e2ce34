package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// property is one key = value entry of a Java properties file, as
// java.util.Properties.load reads it.
type property struct {
	Key, Value string
	// Line is the 1-based line the entry starts on (an entry continued
	// with a trailing backslash spans several lines).
	Line int
	// CommentAt is the byte offset in Value of a " #" that looks like a
	// trailing comment (whitespace, then an unescaped '#'), or -1. Java
	// properties have no trailing comments: Value includes that text, as
	// it does for MirrorMaker 2. A '#' written as "\#" is never one.
	CommentAt int
	// NonASCII is true when Value holds characters beyond ASCII: Java's
	// Properties.load reads files as ISO-8859-1, reo as UTF-8.
	NonASCII bool
	// DroppedEscape is the first escape of Value, such as `\.` or `\d`,
	// whose backslash Java drops (it is not \t \n \r \f \uXXXX nor an
	// escaped separator, comment character, space or backslash): a
	// regular expression written with single backslashes loses them.
	DroppedEscape string
}

// propertiesError is a syntax error of a properties file, with its line.
type propertiesError struct {
	Line int
	Msg  string
}

func (e *propertiesError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func isPropSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// logicalLine is one entry's text before escapes are converted: natural
// lines joined where one ended in an odd number of backslashes (that
// backslash and the next line's leading whitespace removed).
type logicalLine struct {
	text string
	line int
}

// logicalLines splits src into logical lines as java.util.Properties'
// LineReader does: natural lines end at \n, \r or \r\n; leading
// whitespace (space, tab, form feed) is skipped; a line whose first
// non-blank character is '#' or '!' is a comment (and is never continued);
// blank lines are skipped.
func logicalLines(src string) []logicalLine {
	// Natural lines with their numbers.
	type natural struct {
		text string
		line int
	}
	var nat []natural
	line := 1
	for i := 0; i <= len(src); {
		j := i
		for j < len(src) && src[j] != '\n' && src[j] != '\r' {
			j++
		}
		if j == len(src) {
			if i < len(src) {
				nat = append(nat, natural{src[i:], line})
			}
			break
		}
		nat = append(nat, natural{src[i:j], line})
		if src[j] == '\r' && j+1 < len(src) && src[j+1] == '\n' {
			j++
		}
		i = j + 1
		line++
	}
	var out []logicalLine
	var cur strings.Builder
	startLine, continuing := 0, false
	for _, n := range nat {
		s := strings.TrimLeftFunc(n.text, func(r rune) bool { return r < utf8.RuneSelf && isPropSpace(byte(r)) })
		if !continuing {
			if s == "" || s[0] == '#' || s[0] == '!' {
				continue
			}
			startLine = n.line
			cur.Reset()
		}
		// An odd number of trailing backslashes continues the line.
		bs := 0
		for k := len(s) - 1; k >= 0 && s[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 1 {
			cur.WriteString(s[:len(s)-1])
			continuing = true
			continue
		}
		cur.WriteString(s)
		continuing = false
		out = append(out, logicalLine{cur.String(), startLine})
	}
	if continuing && cur.Len() > 0 {
		// The file ended after a continuation backslash: Java keeps
		// what it has.
		out = append(out, logicalLine{cur.String(), startLine})
	}
	return out
}

// parseProperties reads src with the syntax of java.util.Properties.load:
// "key=value", "key: value" or "key value" (whitespace around the
// separator ignored, the value's trailing whitespace kept), '\' line
// continuations, the escapes \t \n \r \f \uXXXX and "\x" for any other x
// (so "\=", "\:", "\ " and "\#" are literal), and '#' / '!' comment lines.
// Entries come back in file order; a repeated key appears twice (the last
// one wins in Java).
func parseProperties(src string) ([]property, error) {
	var out []property
	for _, ll := range logicalLines(src) {
		s := ll.text
		// The key ends at the first unescaped '=', ':' or whitespace.
		keyLen, valueStart, hasSep, escaped := len(s), len(s), false, false
		for i := 0; i < len(s); i++ {
			c := s[i]
			if escaped {
				escaped = false
				continue
			}
			if c == '\\' {
				escaped = true
				continue
			}
			if c == '=' || c == ':' {
				keyLen, valueStart, hasSep = i, i+1, true
				break
			}
			if isPropSpace(c) {
				keyLen, valueStart = i, i+1
				break
			}
		}
		for valueStart < len(s) && isPropSpace(s[valueStart]) {
			valueStart++
		}
		if !hasSep && valueStart < len(s) && (s[valueStart] == '=' || s[valueStart] == ':') {
			valueStart++
			for valueStart < len(s) && isPropSpace(s[valueStart]) {
				valueStart++
			}
		}
		key, _, err := convertEscapes(s[:keyLen])
		if err != nil {
			return nil, &propertiesError{ll.line, fmt.Sprintf("in the key: %v", err)}
		}
		raw := s[valueStart:]
		value, commentAt, err := convertEscapes(raw)
		if err != nil {
			// The key, never the value's text.
			return nil, &propertiesError{ll.line, fmt.Sprintf("%s: in the value: %v", key, err)}
		}
		nonASCII := false
		for i := 0; i < len(value); i++ {
			if value[i] >= utf8.RuneSelf {
				nonASCII = true
				break
			}
		}
		out = append(out, property{Key: key, Value: value, Line: ll.line, CommentAt: commentAt, NonASCII: nonASCII, DroppedEscape: droppedEscape(raw)})
	}
	return out, nil
}

// droppedEscape returns the first "\x" of raw whose backslash Java drops
// and that is not an obviously intended escape, or "".
func droppedEscape(raw string) string {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if !strings.ContainsRune("tnrfu\\=:#! ", rune(raw[i+1])) {
			return raw[i : i+2]
		}
		i++
	}
	return ""
}

// errMalformedU is a \u escape without four hexadecimal digits. It does not
// quote the text: a value may be a password.
var errMalformedU = errors.New(`malformed \uXXXX escape: \u must be followed by four hexadecimal digits (Java refuses the file too)`)

// convertEscapes converts the escapes of a properties key or value. It
// also returns the offset in the result of the first unescaped '#' that
// follows whitespace (a would-be trailing comment), or -1.
func convertEscapes(s string) (string, int, error) {
	var b strings.Builder
	commentAt := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			if c == '#' && commentAt < 0 && b.Len() > 0 {
				out := b.String()
				if isPropSpace(out[len(out)-1]) {
					commentAt = len(strings.TrimRightFunc(out, func(r rune) bool { return r < utf8.RuneSelf && isPropSpace(byte(r)) }))
				}
			}
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			break // a lone trailing backslash is dropped, as Java does
		}
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			// The text is not quoted: it may be a secret's.
			if i+5 > len(s) {
				return "", -1, errMalformedU
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", -1, errMalformedU
			}
			r := rune(n)
			// A surrogate pair written as two escapes is one character.
			if r >= 0xD800 && r < 0xDC00 && i+11 <= len(s) && strings.HasPrefix(s[i+5:], `\u`) {
				if lo, err := strconv.ParseUint(s[i+7:i+11], 16, 16); err == nil && lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + rune(lo-0xDC00)
					i += 6
				}
			}
			b.WriteRune(r)
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), commentAt, nil
}
