package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TypeError is one wrongly typed value: where it is, and serde's message
// for it in the form Codex's config writes answer with (what is wrong,
// then "\nin `PATH`\n").
type TypeError struct {
	At  []string // the value's keys (array elements by index)
	Msg string
}

// CodexTypeErrors checks a config.toml document, as BurntSushi/toml
// decodes it, against the types Codex 0.169 gives every key it knows, and
// returns every wrongly typed value, in key order. A key Codex does not
// know is not checked, as Codex ignores it. Codex names the first bad
// value in the document's order (see FirstTypeError).
func CodexTypeErrors(doc map[string]any) []TypeError {
	codexSchemaOnce.Do(loadCodexSchema)
	inst := jsonValue(doc)
	f := checkSchema(codexSchema, inst, nil)
	if f == nil {
		return nil
	}
	var found []problem
	collect(f, &found)
	return typeErrors(found)
}

// MCPTransportErrors are Codex 0.169's refusals of the transport of the
// [mcp_servers.NAME] tables in doc that none of errs (CodexTypeErrors'
// answer) is inside: serde reads a server's values before it picks the
// transport (observed: a server with neither command nor url is "invalid
// transport", named by its table, and a wrongly typed value in it is
// named instead).
func MCPTransportErrors(doc map[string]any, errs []TypeError) []TypeError {
	servers, _ := doc["mcp_servers"].(map[string]any)
	var out []TypeError
	for _, name := range slices.Sorted(mapKeys(servers)) {
		t, isMap := servers[name].(map[string]any)
		at := []string{"mcp_servers", name}
		if !isMap || slices.ContainsFunc(errs, func(e TypeError) bool {
			return len(e.At) >= 2 && slices.Equal(e.At[:2], at)
		}) {
			continue
		}
		if msg := mcpTransport(t); msg != "" {
			out = append(out, TypeError{At: at, Msg: msg + "\nin `" + serdePath(at) + "`\n"})
		}
	}
	return out
}

// CheckCodexTypes is the message of the first of CodexTypeErrors in key
// order, or "".
func CheckCodexTypes(doc map[string]any) string {
	if errs := CodexTypeErrors(doc); len(errs) > 0 {
		return errs[0].Msg
	}
	return ""
}

// FirstTypeError is the error Codex names of errs: the one whose value
// comes first in the document, keys giving the document's keys in order
// (as toml.MetaData.Keys lists them); an error whose place is not among
// them comes after those that are. ok is false for no errors.
func FirstTypeError(errs []TypeError, keys [][]string) (TypeError, bool) {
	if len(errs) == 0 {
		return TypeError{}, false
	}
	pos := make(map[string]int, len(keys))
	for i, k := range keys {
		j := strings.Join(k, "\x00")
		if _, dup := pos[j]; !dup {
			pos[j] = i
		}
	}
	rank := func(at []string) int {
		var keys []string
		for _, p := range at {
			if _, err := strconv.Atoi(p); err != nil {
				keys = append(keys, p)
			}
		}
		for n := len(keys); n > 0; n-- {
			if i, ok := pos[strings.Join(keys[:n], "\x00")]; ok {
				return i
			}
		}
		return len(pos)
	}
	best := 0
	for i := 1; i < len(errs); i++ {
		if rank(errs[i].At) < rank(errs[best].At) {
			best = i
		}
	}
	return errs[best], true
}

type problem struct {
	at      []string
	msg     string
	missing bool // a struct's missing key
}

// typeErrors are the problems found as TypeErrors, in key order. A
// struct's missing key is left out when a value inside the struct is
// wrong: serde meets that value while reading the struct, before it looks
// for the keys that were not there (Codex 0.169 names sandbox_approval's
// type in {granular = {sandbox_approval = "x"}}, not the missing rules).
func typeErrors(found []problem) []TypeError {
	sort.SliceStable(found, func(i, j int) bool { return lessPath(found[i].at, found[j].at) })
	out := make([]TypeError, 0, len(found))
	for i, p := range found {
		if p.missing && slices.ContainsFunc(found[i+1:], func(q problem) bool {
			return len(q.at) > len(p.at) && slices.Equal(q.at[:len(p.at)], p.at)
		}) {
			continue
		}
		out = append(out, TypeError{At: p.at, Msg: p.msg + "\nin `" + serdePath(p.at) + "`\n"})
	}
	return out
}

// collect gathers serde's message for each failure of the tree below f.
func collect(f *failure, out *[]problem) {
	node := schemaAt(f.url)
	v := f.v
	switch f.kind {
	case failType:
		if _, isEnum := node["enum"]; isEnum {
			if m, isMap := v.(map[string]any); isMap {
				enumTable(f.url, f.at, node, m, out)
				return
			}
			*out = append(*out, problem{at: f.at, msg: enumMessage(v, nil)})
			return
		}
		if msg, ok := structSeqError(f.url, node, v); ok {
			*out = append(*out, problem{at: f.at, msg: msg})
			return
		}
		*out = append(*out, problem{at: f.at, msg: "invalid type: " + serdeKind(v) + ", expected " + expectation(f.url, node)})
		return
	case failFormat:
		if r, ok := intRanges[f.want]; ok {
			*out = append(*out, problem{at: f.at, msg: fmt.Sprintf("invalid value: integer `%v`, expected %s", v, r.rust)})
		}
		return
	case failEnum:
		*out = append(*out, problem{at: f.at, msg: enumMessage(v, enumVariants(node))})
		return
	case failRequired:
		*out = append(*out, problem{at: f.at, msg: "missing field `" + f.want + "`", missing: true})
		return
	case failOneOf, failAnyOf:
		if tags := internalTags(node); tags != nil {
			internallyTagged(f, v, tags, out)
			return
		}
		if vs := enumVariants(node); vs != nil {
			// A Rust enum of named variants, which schemars writes as
			// one branch per variant.
			if m, isMap := v.(map[string]any); isMap {
				enumTable(f.url, f.at, node, m, out)
				return
			}
			*out = append(*out, problem{at: f.at, msg: enumMessage(v, vs)})
			return
		}
		name := rustName(f.url)
		if exp, ok := untaggedExpectations[name]; ok {
			*out = append(*out, problem{at: f.at, msg: "invalid type: " + serdeKind(v) + ", expected " + exp})
			return
		}
		*out = append(*out, problem{at: f.at, msg: "data did not match any variant of untagged enum " + name})
		return
	}
	for _, c := range f.causes {
		collect(c, out)
	}
}

// untaggedExpectations are the enums whose own deserializer says what it
// expected, as Codex 0.169 answers.
var untaggedExpectations = map[string]string{
	"KeybindingsSpec": "a keybinding string or a list of keybinding strings",
}

// internalTags lists the tags of an internally tagged enum schema (a oneOf
// of tables whose required "type" names the variant), or nil.
func internalTags(node map[string]any) []string {
	branches, ok := node["oneOf"].([]any)
	if !ok {
		return nil
	}
	var tags []string
	for _, b := range branches {
		bm, _ := b.(map[string]any)
		props, _ := bm["properties"].(map[string]any)
		tm, _ := props["type"].(map[string]any)
		vals, _ := tm["enum"].([]any)
		if len(vals) != 1 {
			return nil
		}
		tags = append(tags, fmt.Sprint(vals[0]))
	}
	return tags
}

// internallyTagged words the failure of an internally tagged enum as
// serde does: the value must be a table, its "type" a known tag, and then
// the tagged variant's own errors count, every one (Codex 0.169 names a
// hook handler's wrongly typed key, `{type = "command", command = 5}`).
func internallyTagged(f *failure, v any, tags []string, out *[]problem) {
	m, isMap := v.(map[string]any)
	if !isMap {
		*out = append(*out, problem{at: f.at, msg: "invalid type: " + serdeKind(v) + ", expected internally tagged enum " + rustName(f.url)})
		return
	}
	tag, isStr := m["type"].(string)
	if _, has := m["type"]; !has {
		*out = append(*out, problem{at: f.at, msg: "missing field `type`"})
		return
	}
	at := append(append([]string(nil), f.at...), "type")
	i := slices.Index(tags, tag)
	if !isStr || i < 0 {
		*out = append(*out, problem{at: at, msg: enumMessage(m["type"], tags)})
		return
	}
	if len(f.causes) == len(tags) { // no branch matched: one failure each
		collect(f.causes[i], out)
	}
}

// enumMessage is serde's error for value v of an enum of named variants.
func enumMessage(v any, variants []string) string {
	s, ok := v.(string)
	if !ok {
		return "invalid type: unit variant, expected string only"
	}
	msg := "unknown variant `" + s + "`, expected "
	switch len(variants) {
	case 1:
		return msg + "`" + variants[0] + "`"
	case 2:
		return msg + "`" + variants[0] + "` or `" + variants[1] + "`"
	}
	return msg + "one of `" + strings.Join(variants, "`, `") + "`"
}

// enumVariants lists the variants of an enum schema: its string values,
// and for a oneOf of such branches (and of one-key tables, a variant with
// data) theirs; nil for anything else.
func enumVariants(node map[string]any) []string {
	if vals, ok := node["enum"].([]any); ok {
		var out []string
		for _, x := range vals {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	branches, ok := node["oneOf"].([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, b := range branches {
		bm, _ := b.(map[string]any)
		if vs := enumVariants(bm); vs != nil {
			out = append(out, vs...)
			continue
		}
		req, _ := bm["required"].([]any)
		props, _ := bm["properties"].(map[string]any)
		if len(req) != 1 || len(props) != 1 {
			return nil
		}
		out = append(out, fmt.Sprint(req[0]))
	}
	return out
}

// expectation is what serde says it expected of a value of this schema.
func expectation(url string, node map[string]any) string {
	switch node["type"] {
	case "string":
		return "a string"
	case "boolean":
		return "a boolean"
	case "integer":
		if r, ok := intRanges[fmt.Sprint(node["format"])]; ok {
			return r.rust
		}
		return "i64"
	case "number":
		return "f64"
	case "array":
		return "a sequence"
	case "object":
		if _, isStruct := node["properties"]; isStruct {
			if name := rustName(url); name != "" {
				return "struct " + name
			}
		}
		return "a map"
	}
	return "a value"
}

// rustName is the Rust type a schema location names: the definition's
// name, without schemars' "_for_T" of a generic.
func rustName(url string) string {
	_, frag, _ := strings.Cut(url, "#")
	parts := strings.Split(strings.TrimPrefix(frag, "/"), "/")
	if len(parts) < 2 || parts[0] != "definitions" {
		return ""
	}
	name, _, _ := strings.Cut(parts[1], "_for_")
	return name
}

// schemaAt is the schema object at url (its keyword stripped), in the
// embedded schema.
func schemaAt(url string) map[string]any {
	m, _ := pointerIn(codexSchemaDoc, url).(map[string]any)
	return m
}

// pointerIn is the value at url's JSON pointer (after the "#") in doc, or
// nil.
func pointerIn(doc any, url string) any {
	_, frag, _ := strings.Cut(url, "#")
	cur := doc
	for _, p := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if p == "" {
			continue
		}
		p = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
		switch x := cur.(type) {
		case map[string]any:
			cur = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			cur = x[i]
		default:
			return nil
		}
	}
	return cur
}

// cutPath is whether Codex names a table above the value at at, not
// the value's own path (see cutPaths).
func cutPath(at []string) bool {
	var keys []string
	for _, p := range at {
		if _, err := strconv.Atoi(p); err != nil {
			keys = append(keys, p)
		}
	}
	return serdePath(at) != strings.Join(keys, ".")
}

// serdePath is a value's path as Codex names it: the keys, dot-joined,
// without array indices, and cut where Codex 0.169's reading of a table
// loses the path below it (see cutPaths).
func serdePath(at []string) string {
	var keys []string
	for _, p := range at {
		if _, err := strconv.Atoi(p); err == nil {
			continue
		}
		keys = append(keys, p)
	}
	for _, c := range cutPaths {
		n := len(c.table)
		if len(keys) > n && slices.Equal(keys[:n], c.table) && strings.HasPrefix(keys[n], c.prefix) && keys[n] != c.except {
			keys = keys[:n]
			break
		}
	}
	return strings.Join(keys, ".")
}

// cutPaths are where Codex 0.169 names a table instead of the bad value
// inside it (observed): the key below table starts with prefix and is not
// except. [apps] names itself for its apps (not for _default), [hooks]
// for anything inside, [tui] for its notification settings, and
// tui.model_availability_nux for its entries.
var cutPaths = []struct {
	table          []string
	prefix, except string
}{{[]string{"apps"}, "", "_default"}, {[]string{"hooks"}, "", ""}, {[]string{"tui"}, "notification", ""}, {[]string{"tui", "model_availability_nux"}, "", ""}}

func lessPath(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// serdeKind describes a value as serde's "invalid type" errors do.
func serdeKind(v any) string {
	switch x := v.(type) {
	case string:
		return "string " + strconv.Quote(x)
	case int64:
		return fmt.Sprintf("integer `%d`", x)
	case float64:
		b, _ := json.Marshal(x)
		s := string(b)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return "floating point `" + s + "`"
	case bool:
		return fmt.Sprintf("boolean `%t`", x)
	case []any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return "a date-time"
}

// jsonValue turns a decoded TOML document into the values the schema
// validator takes: arrays of tables as arrays, date-times as strings.
func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonValue(e)
		}
		return m
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case string, int64, float64, bool:
		return x
	}
	return fmt.Sprint(v)
}
