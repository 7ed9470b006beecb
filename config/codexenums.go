package config

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// enumTable words a table given where an enum of named variants is
// expected as Codex 0.169 answers it (observed: serde reads the table's
// one key as the variant): exactly one key, a known variant; a unit
// variant's value an empty table or an empty array; a variant with data
// its data, whose errors name the enum's path and below it, not the
// variant's key. Below a table that Codex names for what is inside it (see
// cutPaths), cutEnumTable words it.
func enumTable(url string, at []string, node, m map[string]any, out *[]problem) {
	add := func(msg string) { *out = append(*out, problem{at: slices.Clone(at), msg: msg}) }
	if cutPath(at) {
		cutEnumTable(url, node, m, add)
		return
	}
	switch {
	case len(m) == 0:
		add("wanted exactly 1 element, found 0 elements")
		return
	case len(m) > 1:
		add("wanted exactly 1 element, more than 1 element")
		return
	}
	var k string
	var val any
	for k, val = range m {
	}
	unit, data := variantSchemas(url, node)
	if slices.Contains(unit, k) {
		switch x := val.(type) {
		case map[string]any:
			if len(x) > 0 {
				add("expected empty table")
			}
		case []any:
			if len(x) > 0 {
				add("expected empty array")
			}
		default:
			add("expected table, found " + tomlType(val))
		}
		return
	}
	n, ok := data[k]
	if !ok {
		add(enumMessage(k, enumVariants(node)))
		return
	}
	if _, isMap := val.(map[string]any); !isMap && n.ref == nil && n.typ == "object" {
		// A variant with fields of its own (not a struct of its own).
		add("invalid type: " + serdeKind(val) + ", expected struct variant " + rustName(url) + "::" + variantName(k))
		return
	}
	if f := checkSchema(n, val, at); f != nil {
		collect(f, out)
	}
}

// cutEnumTable is enumTable's wording for a key Codex reads through a
// table above it, as serde words an enum it reads from a value already
// parsed (observed for tui.notification_method and apps.NAME's
// default_tools_approval_mode): exactly one key, a known variant, and a
// unit variant's value no number, string or boolean. What it says of
// other values differs from table to table, and is left as it was.
func cutEnumTable(url string, node, m map[string]any, add func(string)) {
	if len(m) != 1 {
		add("invalid value: map, expected map with a single key")
		return
	}
	var k string
	var val any
	for k, val = range m {
	}
	unit, data := variantSchemas(url, node)
	switch {
	case data[k] != nil:
	case !slices.Contains(unit, k):
		add(enumMessage(k, enumVariants(node)))
		return
	default:
		switch val.(type) {
		case int64, float64, string, bool:
			add("invalid type: " + serdeKind(val) + ", expected unit")
			return
		}
	}
	add(enumMessage(m, enumVariants(node)))
}

// variantSchemas are the variants of the enum schema node at url: the unit
// ones (strings), and those with data (one-key tables), with the schema
// of their data.
func variantSchemas(url string, node map[string]any) (unit []string, data map[string]*schemaNode) {
	if vals, ok := node["enum"].([]any); ok {
		for _, v := range vals {
			s, _ := v.(string)
			unit = append(unit, s)
		}
		return unit, nil
	}
	_, frag, _ := strings.Cut(url, "#")
	data = map[string]*schemaNode{}
	branches, _ := node["oneOf"].([]any)
	for i, b := range branches {
		bm, _ := b.(map[string]any)
		if vals, ok := bm["enum"].([]any); ok {
			for _, v := range vals {
				s, _ := v.(string)
				unit = append(unit, s)
			}
			continue
		}
		req, _ := bm["required"].([]any)
		if len(req) != 1 {
			continue
		}
		name, _ := req[0].(string)
		if n := codexSchemaByURL["#"+frag+"/oneOf/"+strconv.Itoa(i)+"/properties/"+escapePointer(name)]; n != nil {
			data[name] = n
		}
	}
	return unit, data
}

// variantName is the Rust name of a kebab- or snake-case variant:
// otlp-http is OtlpHttp.
func variantName(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '-' || r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}
