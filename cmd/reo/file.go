package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// listSettings may be given as a YAML sequence as well as a comma-separated
// string.
var listSettings = []string{"source-bootstrap", "dest-bootstrap"}

// loadFile applies a YAML config file: one mapping whose keys are flag names
// (without the dashes) and whose values are what the flag would take. An
// unknown or repeated key, a value that is not a scalar (or a list, for the
// bootstrap servers), a value its setting rejects and a second YAML
// document are errors naming the file, line and key. A key with an empty
// value is ignored.
func (c *settings) loadFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return &usageError{fmt.Sprintf("--config / %s: read config file: %v", envConfig, err)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil // empty file, or only comments
	} else if err != nil {
		return &usageError{fmt.Sprintf("config file %s: %s", path, yamlError(err))}
	}
	// A second document ("---") would be ignored, settings and all: refuse
	// one that holds anything, rather than let it look read. A bare
	// trailing "---" (an empty document) holds nothing.
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &usageError{fmt.Sprintf("config file %s: %s", path, yamlError(err))}
		}
		if len(next.Content) > 0 && !(next.Content[0].Kind == yaml.ScalarNode && next.Content[0].Tag == "!!null") {
			return &usageError{fmt.Sprintf("config file %s line %d: a second YAML document (---): reo reads one document, a single mapping of setting: value; put every setting in it and remove the ---", path, next.Content[0].Line)}
		}
	}
	if len(doc.Content) == 0 {
		return nil // empty file
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // only comments
	}
	if root.Kind != yaml.MappingNode {
		return &usageError{fmt.Sprintf("config file %s line %d: expected a mapping of setting: value at the top level", path, root.Line)}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		at := fmt.Sprintf("config file %s line %d", path, k.Line)
		s, ok := lookupSetting(k.Value)
		if !ok {
			msg := fmt.Sprintf("%s: unknown key %q", at, k.Value)
			if strings.HasSuffix(k.Value, "sasl-password") {
				msg += " (passwords are never read from the config file: use the *_SASL_PASSWORD environment variable or a *-sasl-password-file)"
			} else {
				msg += " (keys are the flag names, e.g. source-bootstrap; see reo replicate -h)"
			}
			return &usageError{msg}
		}
		if line, dup := seen[k.Value]; dup {
			return &usageError{fmt.Sprintf("%s: key %q repeats line %d", at, k.Value, line)}
		}
		seen[k.Value] = k.Line
		var val string
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
			continue
		case v.Kind == yaml.ScalarNode:
			val = v.Value
		case v.Kind == yaml.SequenceNode && slices.Contains(listSettings, s.flag):
			var items []string
			for _, it := range v.Content {
				if it.Kind != yaml.ScalarNode {
					return &usageError{fmt.Sprintf("config file %s line %d: %s: list items must be host:port strings", path, it.Line, k.Value)}
				}
				items = append(items, it.Value)
			}
			val = strings.Join(items, ",")
		default:
			return &usageError{fmt.Sprintf("%s: %s: expected a single value, not a %s", at, k.Value, kindName(v.Kind))}
		}
		if err := c.apply(s, val, "config file"); err != nil {
			return &usageError{fmt.Sprintf("%s: %s: %v", at, k.Value, err)}
		}
	}
	return nil
}

// yamlParserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner) errors. yaml.v3 reports their line 0-based, one line early.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected key", "did not find expected node content",
	"found duplicate %TAG directive", "found duplicate %YAML directive",
	"found incompatible YAML document", "found undefined tag handle",
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml.v3 syntax error into "line N: problem" with N
// 1-based.
func yamlError(err error) string {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	line, _ := strconv.Atoi(m[1])
	if slices.Contains(yamlParserProblems, m[2]) {
		line++
	}
	return fmt.Sprintf("line %d: %s", line, m[2])
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	default:
		return "scalar"
	}
}

// writeConfig prints the effective configuration as a YAML config file,
// each value commented with where it came from. Secrets are omitted; a
// comment says when one is set.
func (c *settings) writeConfig(w io.Writer) error {
	return c.writeConfigSkipping(w, nil)
}

// writeConfigSkipping is writeConfig without the settings skip names
// (flag names, or environment variables of environment-only settings).
func (c *settings) writeConfigSkipping(w io.Writer, skip func(key string) bool) error {
	root := &yaml.Node{Kind: yaml.MappingNode}
	var notes []string
	for _, s := range settingsTable {
		if skip != nil && skip(cmpOr(s.flag, s.env)) {
			continue
		}
		if s.flag == "" {
			if from, ok := c.from[s.env]; ok {
				notes = append(notes, fmt.Sprintf("%s is set (%s; not shown)", s.env, from))
			}
			continue
		}
		v, ok := c.values[s.flag]
		if !ok || (v == "" && s.empty == "") {
			continue
		}
		val := &yaml.Node{Kind: yaml.ScalarNode, Value: v, LineComment: c.from[s.flag]}
		if v == "" {
			// Set empty on purpose: "" (a bare key would be ignored
			// when the file is read back), with what it means.
			val.Style = yaml.DoubleQuotedStyle
			val.LineComment += " (" + s.empty + ")"
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.flag}, val)
	}
	if len(notes) > 0 {
		root.FootComment = strings.Join(notes, "\n")
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}
	if skip != nil {
		doc.HeadComment = "reo's own settings (the MirrorMaker 2 file decides the rest, flow by flow, below)"
	} else if c.configFile != "" {
		doc.HeadComment = "effective configuration (config file " + c.configFile + ")"
	} else {
		doc.HeadComment = "effective configuration"
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return enc.Close()
}
