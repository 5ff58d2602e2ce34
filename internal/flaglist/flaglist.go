// Package flaglist reads the comma-separated lists reo's commands take as
// flags and environment variables (--source-bootstrap, --systems, ...).
package flaglist

import "strings"

// Split returns the items of a comma-separated list, each trimmed of
// spaces, empty items dropped: "a, b,,c " is [a b c], "" is none.
func Split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
