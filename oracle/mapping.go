package oracle

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Mapping says which destination topic each source topic is replicated
// to; partition numbers are always kept. The zero Mapping is the identity.
// With Prefix set, topic t goes to Prefix+t (PrefixMapping builds the
// "<alias>." convention). With Topics non-nil the mapping is explicit:
// only the listed source topics are replicated, and records of other
// source topics are not expected in the destination. A Mapping must be
// one-to-one; Validate says why one is not.
type Mapping struct {
	Prefix string            `json:"prefix,omitempty"`
	Topics map[string]string `json:"topics,omitempty"`
}

// IdentityMapping returns the mapping that keeps every topic name.
func IdentityMapping() Mapping { return Mapping{} }

// PrefixMapping returns the mapping that renames topic t to alias+"."+t,
// the way MirrorMaker 2 names remote topics.
func PrefixMapping(alias string) Mapping { return Mapping{Prefix: alias + "."} }

// ExplicitMapping returns the mapping that replicates exactly the source
// topics in topics, each to the destination topic it names.
func ExplicitMapping(topics map[string]string) Mapping {
	if topics == nil {
		topics = map[string]string{}
	}
	return Mapping{Topics: topics}
}

// Map returns the destination topic of source topic src, and false when m
// does not replicate src.
func (m Mapping) Map(src string) (string, bool) {
	if m.Topics != nil {
		dst, ok := m.Topics[src]
		return dst, ok
	}
	return m.Prefix + src, true
}

// Source returns the source topic replicated into destination topic dst,
// and false when no source topic maps to dst.
func (m Mapping) Source(dst string) (string, bool) {
	if m.Topics != nil {
		for src, d := range m.Topics {
			if d == dst {
				return src, true
			}
		}
		return "", false
	}
	if !strings.HasPrefix(dst, m.Prefix) {
		return "", false
	}
	return dst[len(m.Prefix):], true
}

// Validate returns an error when m is not a usable one-to-one mapping:
// both Prefix and Topics set, an empty topic name, or two source topics
// mapped to one destination topic.
func (m Mapping) Validate() error {
	if m.Topics == nil {
		return nil
	}
	if m.Prefix != "" {
		return errors.New("mapping: prefix and explicit topics are exclusive")
	}
	seen := make(map[string]string, len(m.Topics))
	srcs := make([]string, 0, len(m.Topics))
	for src := range m.Topics {
		srcs = append(srcs, src)
	}
	slices.Sort(srcs)
	for _, src := range srcs {
		dst := m.Topics[src]
		if src == "" || dst == "" {
			return fmt.Errorf("mapping: empty topic name in %q -> %q", src, dst)
		}
		if other, dup := seen[dst]; dup {
			return fmt.Errorf("mapping: source topics %q and %q both map to %q", other, src, dst)
		}
		seen[dst] = src
	}
	return nil
}

// inverse returns a function from destination topic to source topic that
// caches the lookups of Source.
func (m Mapping) inverse() func(string) (string, bool) {
	if m.Topics == nil {
		return m.Source
	}
	rev := make(map[string]string, len(m.Topics))
	for src, dst := range m.Topics {
		rev[dst] = src
	}
	return func(dst string) (string, bool) {
		src, ok := rev[dst]
		return src, ok
	}
}
