package tomledit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A value tomledit writes is a string, int64, float64, bool, []any of
// values, or *Map.

// Map is a table whose keys keep the order they were given in.
type Map struct {
	Keys   []string
	Values []any
}

// Set sets k to v, appending k when new.
func (m *Map) Set(k string, v any) {
	for i, key := range m.Keys {
		if key == k {
			m.Values[i] = v
			return
		}
	}
	m.Keys = append(m.Keys, k)
	m.Values = append(m.Values, v)
}

// Get returns k's value.
func (m *Map) Get(k string) (any, bool) {
	for i, key := range m.Keys {
		if key == k {
			return m.Values[i], true
		}
	}
	return nil, false
}

// formatKey writes one key segment: bare when it can be, else quoted.
func formatKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBare(k[i]) {
			return basic(k)
		}
	}
	return k
}

func formatPath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = formatKey(p)
	}
	return strings.Join(parts, ".")
}

// formatValue writes v inline, as toml_edit writes a new value.
func formatValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return formatString(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return formatFloat(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := formatValue(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case *Map:
		if len(x.Keys) == 0 {
			return "{}", nil
		}
		parts := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			s, err := formatValue(x.Values[i])
			if err != nil {
				return "", err
			}
			parts[i] = formatKey(k) + " = " + s
		}
		return "{ " + strings.Join(parts, ", ") + " }", nil
	}
	return "", fmt.Errorf("tomledit: cannot write a %T", v)
}

// formatFloat writes f as Rust's Display does (never an exponent), with
// ".0" on whole numbers, and TOML's inf and nan.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// formatString picks the string form toml_edit picks: a literal string
// when the text has a backslash and can be written literally (”' when
// it spans lines), otherwise a basic string with escapes.
func formatString(s string) string {
	literalOK, hasBackslash, multiline := true, false, false
	quotes := 0
	for _, r := range s {
		switch {
		case r == '\\':
			hasBackslash = true
		case r == '\n':
			multiline = true
		case r == '\t':
		case r == '\'':
			quotes++
			if quotes >= 3 {
				literalOK = false
			}
			continue
		case r < 0x20 || r == 0x7f:
			literalOK = false
		}
		quotes = 0
	}
	if hasBackslash && literalOK {
		if multiline {
			return "'''\n" + s + "'''"
		}
		if !strings.ContainsRune(s, '\'') {
			return "'" + s + "'"
		}
	}
	return basic(s)
}

func basic(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// section writes the table m at path as a [path] header, its other values,
// then its tables as sections of their own, as toml_edit writes a new
// table. Every section but the first starts with a blank line.
func section(path []string, m *Map, first bool) (string, error) {
	var b strings.Builder
	if !first {
		b.WriteByte('\n')
	}
	b.WriteString("[" + formatPath(path) + "]\n")
	body, err := body(m)
	if err != nil {
		return "", err
	}
	b.WriteString(body)
	sub, err := subsections(path, m)
	if err != nil {
		return "", err
	}
	b.WriteString(sub)
	return b.String(), nil
}

// body writes m's values other than tables, one "key = value" a line.
func body(m *Map) (string, error) {
	var b strings.Builder
	for i, k := range m.Keys {
		if _, isMap := m.Values[i].(*Map); isMap {
			continue
		}
		s, err := formatValue(m.Values[i])
		if err != nil {
			return "", err
		}
		b.WriteString(formatKey(k) + " = " + s + "\n")
	}
	return b.String(), nil
}

// subsections writes m's tables as sections under path.
func subsections(path []string, m *Map) (string, error) {
	var b strings.Builder
	for i, k := range m.Keys {
		sm, isMap := m.Values[i].(*Map)
		if !isMap {
			continue
		}
		s, err := section(append(append([]string{}, path...), k), sm, false)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}
