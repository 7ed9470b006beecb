package config

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The oracle is how CodexTypeErrors worked before checkSchema: a general
// JSON Schema validator (santhosh-tekuri/jsonschema, linked into tests
// only: its package init compiles the draft metaschemas, 3-6 ms and 1.7 MB
// at every start of the binary) and the error tree it gives, worded by
// the same rules (with checkSchema's two corrections: a float is no
// integer, and every failure of an internally tagged enum's variant
// counts; a table for an enum is worded by the same enumTable, whose
// check of a variant's data is checkSchema's). TestCheckSchemaIsTheOracle holds checkSchema to it.

var (
	oracleOnce   sync.Once
	oracleSchema *jsonschema.Schema
)

func loadOracle(t *testing.T) *jsonschema.Schema {
	oracleOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(codexConfigSchema)))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		for name, r := range intRanges {
			c.RegisterFormat(&jsonschema.Format{Name: name, Validate: func(v any) error {
				n, ok := v.(int64)
				if ok && (float64(n) < r.min || float64(n) > r.max) {
					return fmt.Errorf("out of range")
				}
				return nil
			}})
		}
		c.RegisterFormat(&jsonschema.Format{Name: "double", Validate: func(any) error { return nil }})
		if err := c.AddResource("codex_config.schema.json", doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("codex_config.schema.json")
		if err != nil {
			t.Fatal(err)
		}
		oracleSchema = s
	})
	return oracleSchema
}

func oracleTypeErrors(t *testing.T, doc map[string]any) []TypeError {
	codexSchemaOnce.Do(loadCodexSchema) // for the wording's schemaAt
	inst := jsonValue(doc)
	err := loadOracle(t).Validate(floatsAsFloats(inst))
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil
	}
	var found []problem
	oracleCollect(ve, inst, &found)
	return typeErrors(found)
}

// floatsAsFloats is v with each float without a fraction (2.0) given a
// tiny one, for the general validator, whose integer takes 2.0 where
// serde's integers do not; the messages are worded from v itself.
func floatsAsFloats(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = floatsAsFloats(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = floatsAsFloats(e)
		}
		return out
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return json.Number(strconv.FormatFloat(x, 'f', -1, 64) + ".5")
		}
	}
	return v
}

func oracleCollect(e *jsonschema.ValidationError, inst any, out *[]problem) {
	node := schemaAt(e.SchemaURL)
	v := valueAtPath(inst, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		if _, isEnum := node["enum"]; isEnum {
			if m, isMap := v.(map[string]any); isMap {
				enumTable(e.SchemaURL, e.InstanceLocation, node, m, out)
				return
			}
			*out = append(*out, problem{at: e.InstanceLocation, msg: enumMessage(v, nil)})
			return
		}
		if msg, ok := structSeqError(e.SchemaURL, node, v); ok {
			*out = append(*out, problem{at: e.InstanceLocation, msg: msg})
			return
		}
		*out = append(*out, problem{at: e.InstanceLocation, msg: "invalid type: " + serdeKind(v) + ", expected " + expectation(e.SchemaURL, node)})
		return
	case *kind.Format:
		if r, ok := intRanges[k.Want]; ok {
			*out = append(*out, problem{at: e.InstanceLocation, msg: fmt.Sprintf("invalid value: integer `%v`, expected %s", v, r.rust)})
		}
		return
	case *kind.Enum:
		*out = append(*out, problem{at: e.InstanceLocation, msg: enumMessage(v, enumVariants(node))})
		return
	case *kind.Const:
		*out = append(*out, problem{at: e.InstanceLocation, msg: enumMessage(v, []string{fmt.Sprint(k.Want)})})
		return
	case *kind.Required:
		*out = append(*out, problem{at: e.InstanceLocation, msg: "missing field `" + k.Missing[0] + "`", missing: true})
		return
	case *kind.OneOf, *kind.AnyOf:
		if tags := internalTags(node); tags != nil {
			oracleInternallyTagged(e, inst, v, tags, out)
			return
		}
		if vs := enumVariants(node); vs != nil {
			if m, isMap := v.(map[string]any); isMap {
				enumTable(e.SchemaURL, e.InstanceLocation, node, m, out)
				return
			}
			*out = append(*out, problem{at: e.InstanceLocation, msg: enumMessage(v, vs)})
			return
		}
		name := rustName(e.SchemaURL)
		if exp, ok := untaggedExpectations[name]; ok {
			*out = append(*out, problem{at: e.InstanceLocation, msg: "invalid type: " + serdeKind(v) + ", expected " + exp})
			return
		}
		*out = append(*out, problem{at: e.InstanceLocation, msg: "data did not match any variant of untagged enum " + name})
		return
	}
	for _, c := range e.Causes {
		oracleCollect(c, inst, out)
	}
}

func oracleInternallyTagged(e *jsonschema.ValidationError, inst, v any, tags []string, out *[]problem) {
	m, isMap := v.(map[string]any)
	if !isMap {
		*out = append(*out, problem{at: e.InstanceLocation, msg: "invalid type: " + serdeKind(v) + ", expected internally tagged enum " + rustName(e.SchemaURL)})
		return
	}
	tag, isStr := m["type"].(string)
	if _, has := m["type"]; !has {
		*out = append(*out, problem{at: e.InstanceLocation, msg: "missing field `type`"})
		return
	}
	at := append(append([]string(nil), e.InstanceLocation...), "type")
	i := slices.Index(tags, tag)
	if !isStr || i < 0 {
		*out = append(*out, problem{at: at, msg: enumMessage(m["type"], tags)})
		return
	}
	if len(e.Causes) == len(tags) {
		oracleCollect(e.Causes[i], inst, out)
	}
}

// samples are values of every kind a TOML document holds, for each
// schema: the wrong kinds and, for a schema's own kind, its enum's values,
// an unknown one, integers at its range's ends, and tables with each of
// its keys (depth deep) and its required keys filled.
func samples(doc any, node any, depth int) []any {
	m, _ := node.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		return samples(doc, pointerIn(doc, ref), depth)
	}
	out := []any{"zz", int64(5), int64(-1), int64(70000), int64(math.MaxInt64), int64(math.MinInt64),
		1.5, 2.0, math.NaN(), math.Inf(1), true, []any{}, []any{int64(1)}, []any{"a"},
		map[string]any{}, map[string]any{"zz": int64(1)}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if vals, ok := m["enum"].([]any); ok {
		out = append(out, vals...)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		bs, _ := m[kw].([]any)
		both := map[string]any{} // the keys of every table branch: two may match
		for _, b := range bs {
			out = append(out, samples(doc, b, depth)...)
			if g, ok := good(doc, b).(map[string]any); ok {
				for k, v := range g {
					both[k] = v
				}
			}
		}
		if len(both) > 0 {
			out = append(out, both)
		}
	}
	if depth == 0 {
		return out
	}
	props, _ := m["properties"].(map[string]any)
	base := map[string]any{}
	req, _ := m["required"].([]any)
	for _, r := range req {
		k := r.(string)
		if s := samples(doc, props[k], 0); len(s) > 0 {
			// a value of the key's kind: the enum's first, else a string
			base[k] = good(doc, props[k])
		}
	}
	if len(base) > 0 {
		out = append(out, base)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, s := range samples(doc, props[k], depth-1) {
			t := map[string]any{k: s}
			for bk, bv := range base {
				if bk != k {
					t[bk] = bv
				}
			}
			out = append(out, t)
		}
	}
	if addl, ok := m["additionalProperties"].(map[string]any); ok {
		for _, s := range samples(doc, addl, depth-1) {
			out = append(out, map[string]any{"p": s})
		}
	}
	if items, ok := m["items"].(map[string]any); ok {
		for _, s := range samples(doc, items, depth) {
			out = append(out, []any{s}, []any{"zz", s})
		}
	}
	return out
}

// good is a value that node's kind has.
func good(doc, node any) any {
	m, _ := node.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		return good(doc, pointerIn(doc, ref))
	}
	if vals, ok := m["enum"].([]any); ok {
		return vals[0]
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if bs, ok := m[kw].([]any); ok {
			return good(doc, bs[0])
		}
	}
	switch m["type"] {
	case "boolean":
		return true
	case "integer", "number":
		return int64(1)
	case "array":
		return []any{}
	case "object":
		t := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		req, _ := m["required"].([]any)
		for _, r := range req {
			t[r.(string)] = good(doc, props[r.(string)])
		}
		return t
	}
	return "s"
}

// TestCheckSchemaIsTheOracle: for every key of the schema, three tables
// deep, and values of every kind, checkSchema's errors are the general
// validator's, word for word.
func TestCheckSchemaIsTheOracle(t *testing.T) {
	codexSchemaOnce.Do(loadCodexSchema)
	root := codexSchemaDoc.(map[string]any)
	n := 0
	for _, s := range samples(root, root, 4) {
		doc, ok := s.(map[string]any)
		if !ok {
			continue
		}
		n++
		got, want := CodexTypeErrors(doc), oracleTypeErrors(t, doc)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\n got %q\nwant %q", doc, got, want)
		}
	}
	t.Logf("%d documents", n)
}

// TestBinaryLinksNoGeneralSchemaValidator: codexd's binary does not link
// santhosh-tekuri/jsonschema, whose package init costs every start 3-6 ms
// and 1.7 MB resident (it did from c982fd4 on, for config writes).
func TestBinaryLinksNoGeneralSchemaValidator(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", "../cmd/codexd").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/santhosh-tekuri/jsonschema") {
			t.Errorf("cmd/codexd links %s", p)
		}
	}
}

// FuzzCheckSchemaIsTheOracle: for any TOML document (a config write's
// result is the client's), checkSchema's errors are the general
// validator's, and neither panics.
func FuzzCheckSchemaIsTheOracle(f *testing.F) {
	for _, s := range []string{
		"[tui]\nanimations = \"yes\"", "[history]\nmax_bytes = -5", "notify = [1]",
		"[[hooks.Stop]]\nhooks = [{type = \"command\", command = 5, async = \"x\"}]",
		"[otel]\nexporter = {otlp-http = {endpoint = \"e\", protocol = \"json\"}, otlp-grpc = {endpoint = \"e\"}}",
		"[experimental_thread_store]\ntype = \"local\"", "approval_policy = {granular = {}}",
		"[mcp_servers.p]\ncommand = \"c\"\nenv = {A = 1}", "model_context_window = nan",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := map[string]any{}
		if _, err := toml.Decode(s, &doc); err != nil {
			return
		}
		got, want := CodexTypeErrors(doc), oracleTypeErrors(t, doc)
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
		}
	})
}
func valueAtPath(v any, path []string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, _ := strconv.Atoi(p)
			if i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
