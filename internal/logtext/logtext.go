// Package logtext cuts process output down to what an error message can
// carry.
package logtext

import "strings"

// Tail returns the last n lines of s, without a trailing newline; all of
// s when it has n lines or fewer.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Head returns the first n lines of s, without a trailing newline; all of
// s when it has n lines or fewer.
func Head(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
