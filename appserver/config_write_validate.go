package appserver

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/tomledit"
)

// The config.toml keys whose values config writes check, with the words
// of the serde errors Codex answers with. Keys not listed are written as
// given, as Codex writes keys it does not know.
var (
	configStringKeys = []string{"model", "model_provider", "review_model", "instructions", "developer_instructions",
		"compact_prompt", "profile", "chatgpt_base_url", "model_reasoning_effort", "service_tier", "approvals_reviewer"}
	configBoolKeys = []string{"check_for_update_on_startup", "hide_agent_reasoning", "show_raw_agent_reasoning",
		"disable_paste_burst", "allow_login_shell"}
	configEnumKeys = []struct {
		key    string
		values []string
	}{
		{"approval_policy", []string{"untrusted", "on-failure", "on-request", "granular", "never"}},
		{"sandbox_mode", []string{"read-only", "workspace-write", "danger-full-access"}},
		{"model_reasoning_summary", []string{"auto", "concise", "detailed", "none"}},
		{"model_verbosity", []string{"low", "medium", "high"}},
	}
)

// featureTables are the [features] that take a table as well as a
// boolean (Codex's untagged FeatureToml), left to config.CheckCodexTypes.
var featureTables = map[string]bool{"multi_agent_v2": true, "network_proxy": true, "apps_mcp_path_override": true}

// validateConfig checks the keys codexd reads, with the messages of the
// serde errors Codex answers with, and returns every bad value.
func validateConfig(cfg map[string]any) []config.TypeError {
	var out []config.TypeError
	bad := func(msg string, at ...string) {
		out = append(out, config.TypeError{At: at, Msg: msg + "\nin `" + at[0] + "`\n"})
	}
	for _, k := range configStringKeys {
		if v, ok := cfg[k]; ok {
			if _, isStr := v.(string); !isStr {
				bad("invalid type: "+serdeKindOf(v)+", expected a string", k)
			}
		}
	}
	for _, e := range configEnumKeys {
		v, ok := cfg[e.key]
		if !ok {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			if _, isMap := v.(map[string]any); isMap {
				// An enum's table form ({granular = {...}}, {low = {}}):
				// config.CodexTypeErrors words it as Codex 0.169 does.
				continue
			}
			// What serde's TOML reader says of a non-string enum value,
			// as Codex 0.169 answered for model_verbosity = 3.
			bad("invalid type: unit variant, expected string only", e.key)
			continue
		}
		known := false
		for _, x := range e.values {
			known = known || (x == s && !(e.key == "approval_policy" && s == "granular"))
		}
		if !known {
			bad(fmt.Sprintf("unknown variant `%s`, expected one of `%s`", s, strings.Join(e.values, "`, `")), e.key)
		}
	}
	for _, k := range configBoolKeys {
		if v, ok := cfg[k]; ok {
			if _, isBool := v.(bool); !isBool {
				bad("invalid type: "+serdeKindOf(v)+", expected a boolean", k)
			}
		}
	}
	if f, ok := cfg["features"]; ok {
		m, isMap := f.(map[string]any)
		if !isMap {
			bad("invalid type: "+serdeKindOf(f)+", expected a map", "features")
			return out
		}
		for _, k := range sortedKeys(m) {
			if featureTables[k] {
				continue // true, false or a table: see config.CodexTypeErrors
			}
			if _, isBool := m[k].(bool); !isBool {
				if _, isMap := m[k].(map[string]any); isMap {
					continue // a feature's own table ([features.NAME])
				}
				// Codex reads [features] as a map: the path stops there.
				bad("invalid type: "+serdeKindOf(m[k])+", expected a boolean", "features", k)
			}
		}
	}
	return out
}

// configTypeError is the message Codex answers for the edited config cfg,
// whose document (as written) is src: its first wrongly typed value in the
// document's order, by codexd's checks of the keys it reads and else by
// Codex's config schema, then the MCP servers' transports; "" when every
// value is well typed.
func configTypeError(cfg map[string]any, src []byte) string {
	errs := validateConfig(cfg)
	seen := map[string]bool{}
	for _, e := range errs {
		seen[strings.Join(e.At, ".")] = true
	}
	codexErrs := config.CodexTypeErrors(cfg)
	for _, e := range codexErrs {
		if !seen[strings.Join(e.At, ".")] && !(len(e.At) > 1 && e.At[0] == "features" && !featureTables[e.At[1]]) {
			errs = append(errs, e)
		}
	}
	errs = append(errs, config.MCPTransportErrors(cfg, codexErrs)...)
	var keys [][]string
	if md, err := toml.Decode(string(src), &map[string]any{}); err == nil {
		for _, k := range md.Keys() {
			keys = append(keys, k)
		}
	}
	if e, ok := config.FirstTypeError(errs, keys); ok {
		return e.Msg
	}
	return ""
}

// serdeKindOf describes a TOML value as serde's "invalid type" errors do.
func serdeKindOf(v any) string {
	switch x := v.(type) {
	case string:
		return "string " + strconv.Quote(x)
	case int64:
		return fmt.Sprintf("integer `%d`", x)
	case float64:
		return "floating point `" + jsonFloat(x) + "`"
	case bool:
		return fmt.Sprintf("boolean `%t`", x)
	case []any, []map[string]any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return "a date-time"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// canonicalJSON writes v as serde_json writes a TOML value: compact,
// keys sorted, only the escapes JSON needs.
func canonicalJSON(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	case []map[string]any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case string:
		writeJSONString(b, x)
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(jsonFloat(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case time.Time:
		b.WriteString(`{"$__toml_private_datetime":`)
		writeJSONString(b, x.Format(time.RFC3339Nano))
		b.WriteByte('}')
	default:
		b.WriteString(`{"$__toml_private_datetime":`)
		writeJSONString(b, fmt.Sprint(x))
		b.WriteByte('}')
	}
}

// writeJSONString writes s as a JSON string with the minimal escapes
// serde_json uses (invalid UTF-8 becomes U+FFFD, as ranging over s did).
func writeJSONString(b *strings.Builder, s string) {
	q, _ := jsontext.AppendQuote(nil, s)
	b.Write(q)
}

// jsonFloat writes f as serde_json (ryu) does: "1.0", "0.5", "1e20",
// "1.5e-7"; NaN and infinities are null.
func jsonFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	a := math.Abs(f)
	if a != 0 && (a >= 1e16 || a < 1e-5) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := ""
		if strings.HasPrefix(exp, "-") {
			sign = "-"
		}
		exp = strings.TrimLeft(exp, "+-0")
		if exp == "" {
			exp = "0"
		}
		return mant + "e" + sign + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// plainValue turns a tomledit value into the form BurntSushi/toml decodes
// to (map[string]any for tables).
func plainValue(v any) any {
	switch x := v.(type) {
	case *tomledit.Map:
		m := make(map[string]any, len(x.Keys))
		for i, k := range x.Keys {
			m[k] = plainValue(x.Values[i])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	}
	return v
}

func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyValue(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}

// valueAt is the value at path (array elements by index), if any.
func valueAt(root any, path []string) (any, bool) {
	cur := root
	for _, p := range path {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[p]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// mergeValue applies one edit to the values as Codex's config service
// does: nil removes the key; a table upserted onto a table merges into
// it; parents are made as needed, and a value that is in the way of a
// deeper parent becomes a table, but the key's own parent must be one.
func mergeValue(root map[string]any, path []string, v any, upsert bool) error {
	parents, last := path[:len(path)-1], path[len(path)-1]
	if v == nil {
		cur := root
		for _, p := range parents {
			next, ok := cur[p].(map[string]any)
			if !ok {
				return nil
			}
			cur = next
		}
		delete(cur, last)
		return nil
	}
	cur := root
	for i, p := range parents {
		next, exists := cur[p]
		m, isMap := next.(map[string]any)
		switch {
		case !exists || !isMap && i < len(parents)-1:
			m = map[string]any{}
			cur[p] = m
		case !isMap:
			return errors.New("cannot set value on non-table parent")
		}
		cur = m
	}
	table := cur
	if vm, isMap := v.(map[string]any); isMap && upsert {
		if existing, ok := table[last].(map[string]any); ok {
			mergeTables(existing, vm)
			return nil
		}
	}
	table[last] = v
	return nil
}

// mergeTables merges src into dst, tables recursively.
func mergeTables(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeTables(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}
