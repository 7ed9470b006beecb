package config

import (
	"fmt"
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
		cutEnumTable(url, at, node, m, add)
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
		name := "struct variant " + rustName(url) + "::" + variantName(k)
		if msg, ok := emptySeqStruct(val, name, len(n.props), len(n.required)); ok {
			add(msg)
			return
		}
		add("invalid type: " + serdeKind(val) + ", expected " + name)
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
// unit variant's value no number, string, boolean or array, nor a table:
// under [tui] an empty table is a unit, under [apps] it is not. What it
// says of a variant with data is left as it was.
func cutEnumTable(url string, at []string, node, m map[string]any, add func(string)) {
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
		if x, isMap := val.(map[string]any); isMap && len(x) == 0 && at[0] == "tui" {
			return
		}
		add("invalid type: " + serdeKind(val) + ", expected unit")
		return
	}
	add(enumMessage(m, enumVariants(node)))
}

// emptySeqStruct is serde's error for an empty array given for the struct
// called name (of fields fields, required of them required): serde reads
// a sequence's elements as the fields in declaration order, and fails at
// the first without a default (Codex 0.169 answered so for
// GranularApprovalConfig, ModelProviderAuthInfo, the tool_suggest
// entries, otel's exporter variants: at their first field; SkillConfig at
// its third). Nothing is said of a struct with no required field, whose
// fields may all have defaults.
func emptySeqStruct(v any, name string, fields, required int) (string, bool) {
	seq, isSeq := v.([]any)
	if !isSeq || len(seq) > 0 || required == 0 {
		return "", false
	}
	return fmt.Sprintf("invalid length %d, expected %s with %d elements", seqFirstRequired[name], name, fields), true
}

// seqFirstRequired is the index of a struct's first field without a
// default where it is not 0 (the schema does not keep the fields' order).
var seqFirstRequired = map[string]int{"struct SkillConfig": 2}

// structSeqError is emptySeqStruct for the struct schema node at url.
func structSeqError(url string, node map[string]any, v any) (string, bool) {
	props, ok := node["properties"].(map[string]any)
	if !ok || rustName(url) == "" {
		return "", false
	}
	req, _ := node["required"].([]any)
	return emptySeqStruct(v, "struct "+rustName(url), len(props), len(req))
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
