package config

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Override is one `-c key=value`: a dotted key and a TOML value.
type Override struct {
	// Path is the key split at its dots: "model_providers.mock.base_url"
	// is ["model_providers", "mock", "base_url"].
	Path []string
	// Value is what TOML made of the value: string, int64, float64, bool,
	// []any, map[string]any or a date-time. A value TOML cannot read is
	// taken as a string, so `-c model=o3` needs no quotes.
	Value any
	// Text is the override as given, for error messages.
	Text string
}

// ParseOverride reads "key=value" as `codex -c` does.
func ParseOverride(s string) (Override, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return Override{}, fmt.Errorf("override %q: expected key=value", s)
	}
	k = strings.TrimSpace(k)
	if k == "" {
		return Override{}, fmt.Errorf("override %q: empty key", s)
	}
	path := strings.Split(k, ".")
	for _, p := range path {
		if strings.TrimSpace(p) == "" {
			return Override{}, fmt.Errorf("override %q: empty key segment in %q", s, k)
		}
	}
	return Override{Path: path, Value: parseValue(v), Text: s}, nil
}

func parseValue(v string) any {
	var doc map[string]any
	if _, err := toml.Decode("v = "+v, &doc); err == nil {
		if val, ok := doc["v"]; ok && len(doc) == 1 {
			return val
		}
	}
	s := strings.TrimSpace(v)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return s
}

// Apply sets the override in a TOML tree, creating tables on the way.
func (o Override) Apply(tree map[string]any) error {
	t := tree
	for i, seg := range o.Path[:len(o.Path)-1] {
		next, exists := t[seg]
		if !exists {
			m := map[string]any{}
			t[seg] = m
			t = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("override %q: %s is a %s, not a table", o.Text, strings.Join(o.Path[:i+1], "."), tomlType(next))
		}
		t = m
	}
	t[o.Path[len(o.Path)-1]] = o.Value
	return nil
}

// ApplyOverrides parses each `-c` string and sets it in tree, in order.
func ApplyOverrides(tree map[string]any, overrides []string) ([]Override, error) {
	var out []Override
	for _, s := range overrides {
		o, err := ParseOverride(s)
		if err != nil {
			return nil, err
		}
		if err := o.Apply(tree); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// applyOverrides sets the overrides in raw and reads fc again from the
// result. The file alone decoded cleanly, so an error now comes from an
// override, and is reported as that override.
func applyOverrides(raw map[string]any, fc *fileConfig, overrides []string) error {
	applied, err := ApplyOverrides(raw, overrides)
	if err != nil {
		return &Error{File: "-c", Msg: err.Error()}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(raw); err != nil {
		return &Error{File: "-c", Msg: fmt.Sprintf("cannot apply overrides: %v", err)}
	}
	var merged fileConfig
	if _, err := toml.Decode(buf.String(), &merged); err != nil {
		e := asError("-c", err)
		e.Line = 0 // a line of the re-encoded tree means nothing to the user
		for i := len(applied) - 1; i >= 0; i-- {
			k := strings.Join(applied[i].Path, ".")
			if e.Key == k || strings.HasPrefix(e.Key, k+".") || strings.HasPrefix(k, e.Key+".") {
				e.File = "-c " + applied[i].Text
				break
			}
		}
		return e
	}
	*fc = merged
	return nil
}
