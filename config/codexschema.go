package config

import (
	_ "embed"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// codexConfigSchema is the types Codex 0.169 gives config.toml's keys. It
// was transcribed from openai/codex, codex-rs/core/config.schema.json at
// commit 000c857ecc17e5ab40a985bdaa40816450ee5ebf (the schema Codex
// generates from its config types), keeping only the types: descriptions
// and defaults are left out, and so are what serde does not enforce when
// Codex reads the file (unknown keys are ignored, and an integer is held
// only to its Rust type's range, given as the format). Keys the 0.169
// binary does not name were left out, and NotificationMethod has the
// osc777 that Codex 0.169 lists. Its $comment says the same.
//
// It is a draft-07 schema of few keywords: type (one name), enum (of
// strings), format (an integer's Rust type, or "double"), $ref (alone),
// properties, required, additionalProperties, maxProperties, items (one
// schema), anyOf and oneOf (alone). checkSchema, below, validates against exactly that
// subset; loadCodexSchema refuses a schema that uses anything else.
//
//go:embed codex_config.schema.json
var codexConfigSchema []byte

var (
	codexSchemaOnce  sync.Once
	codexSchema      *schemaNode
	codexSchemaByURL map[string]*schemaNode
	codexSchemaDoc   any // the schema as JSON, for the messages' wording
)

// intRanges are the integer formats of the schema, by Rust type.
var intRanges = map[string]struct {
	rust     string
	min, max float64
}{
	"int32":  {"i32", math.MinInt32, math.MaxInt32},
	"int64":  {"i64", math.MinInt64, math.MaxInt64},
	"uint":   {"usize", 0, math.MaxUint64},
	"uint16": {"u16", 0, math.MaxUint16},
	"uint32": {"u32", 0, math.MaxUint32},
	"uint64": {"u64", 0, math.MaxUint64},
}

// schemaNode is one schema of the embedded document, compiled.
type schemaNode struct {
	url      string // "#" and its JSON pointer in the document
	typ      string // "" for any
	enum     []string
	hasEnum  bool
	format   string
	ref      *schemaNode
	props    map[string]*schemaNode
	addl     *schemaNode // additionalProperties (true is nil, as is absent)
	required []string
	maxProps int // 0 for none
	items    *schemaNode
	anyOf    []*schemaNode
	oneOf    []*schemaNode
}

// loadCodexSchema compiles the embedded schema, once, on the first config
// write: nothing of it is done at start-up.
func loadCodexSchema() {
	var doc any
	if err := json.Unmarshal(codexConfigSchema, &doc); err != nil {
		panic("config: the embedded Codex config schema: " + err.Error())
	}
	byURL := map[string]*schemaNode{}
	root, err := compileSchema(doc, doc, "#", byURL)
	if err != nil {
		panic("config: the embedded Codex config schema: " + err.Error())
	}
	codexSchema, codexSchemaByURL, codexSchemaDoc = root, byURL, doc
}

type schemaError string

func (e schemaError) Error() string { return string(e) }

// compileSchema compiles the schema at url (x, in doc), resolving $refs
// within doc; byURL holds what is compiled, for recursive definitions.
func compileSchema(doc, x any, url string, byURL map[string]*schemaNode) (*schemaNode, error) {
	if n, ok := byURL[url]; ok {
		return n, nil
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, schemaError(url + ": not a schema object")
	}
	n := &schemaNode{url: url}
	byURL[url] = n
	sub := func(kw string, v any) (*schemaNode, error) {
		return compileSchema(doc, v, url+"/"+kw, byURL)
	}
	for kw, v := range m {
		var err error
		switch kw {
		case "$schema", "$comment", "title", "definitions":
		case "type":
			s, ok := v.(string)
			if !ok {
				return nil, schemaError(url + ": type is not one name")
			}
			n.typ = s
		case "enum":
			n.hasEnum = true
			for _, e := range v.([]any) {
				s, ok := e.(string)
				if !ok {
					return nil, schemaError(url + ": enum of a non-string")
				}
				n.enum = append(n.enum, s)
			}
		case "format":
			n.format, _ = v.(string)
			if _, known := intRanges[n.format]; !known && n.format != "double" {
				return nil, schemaError(url + ": format " + n.format)
			}
		case "$ref":
			ref, _ := v.(string)
			if len(m) != 1 {
				return nil, schemaError(url + ": $ref beside other keywords")
			}
			target := pointerIn(doc, ref)
			if target == nil {
				return nil, schemaError(url + ": $ref " + ref + " not found")
			}
			n.ref, err = compileSchema(doc, target, ref, byURL)
		case "properties":
			n.props = map[string]*schemaNode{}
			for k, pv := range v.(map[string]any) {
				n.props[k], err = sub("properties/"+escapePointer(k), pv)
				if err != nil {
					return nil, err
				}
			}
		case "required":
			for _, r := range v.([]any) {
				s, _ := r.(string)
				n.required = append(n.required, s)
			}
		case "additionalProperties":
			if b, isBool := v.(bool); isBool {
				if !b {
					return nil, schemaError(url + ": additionalProperties false")
				}
				continue
			}
			n.addl, err = sub(kw, v)
		case "maxProperties":
			f, _ := v.(float64)
			if n.maxProps = int(f); n.maxProps < 1 {
				return nil, schemaError(url + ": maxProperties below 1")
			}
		case "items":
			n.items, err = sub(kw, v)
		case "anyOf", "oneOf":
			bs, _ := v.([]any)
			var out []*schemaNode
			for i, b := range bs {
				c, err := sub(kw+"/"+strconv.Itoa(i), b)
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
			if kw == "anyOf" {
				n.anyOf = out
			} else {
				n.oneOf = out
			}
		default:
			return nil, schemaError(url + ": keyword " + kw + " is not supported")
		}
		if err != nil {
			return nil, err
		}
	}
	return n, nil
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// failKind is how a schema failed a value.
type failKind int

const (
	failGroup    failKind = iota // several of the schema's keywords failed (causes)
	failRef                      // its $ref's target failed (causes)
	failInvalid                  // the value is no JSON value (NaN, infinity)
	failType                     // not of the schema's type
	failEnum                     // not one of the enum's strings
	failFormat                   // an integer out of its Rust type's range
	failRequired                 // a required key is missing (want)
	failMaxProps                 // more keys than maxProperties
	failAnyOf                    // no branch matched (causes)
	failOneOf                    // no branch matched (causes), or two did (none)
)

// failure is one failure of a value against a schema, as a tree: where
// in the schema (url) and the document (at), how, and what it is made of.
// Its shape is the validation's: a schema's one failure is itself, two or
// more are a group; a $ref wraps its target's failures.
type failure struct {
	url    string
	at     []string
	kind   failKind
	want   string // failFormat: the format; failRequired: the first missing key
	v      any    // the value that failed
	causes []*failure
}

// checkSchema validates value v, at at in the document, against n.
func checkSchema(n *schemaNode, v any, at []string) *failure {
	fail := func(k failKind, want string) *failure {
		return &failure{url: n.url, at: slices.Clone(at), kind: k, want: want, v: v}
	}
	if f, isFloat := v.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return fail(failInvalid, "")
	}
	if n.typ != "" && !typeMatches(n.typ, v) {
		return fail(failType, "")
	}
	if n.hasEnum {
		s, isStr := v.(string)
		if !isStr || !slices.Contains(n.enum, s) {
			return fail(failEnum, "")
		}
	}
	if r, ok := intRanges[n.format]; ok {
		if i, isInt := v.(int64); isInt && (float64(i) < r.min || float64(i) > r.max) {
			return fail(failFormat, n.format)
		}
	}
	if n.ref != nil {
		f := checkSchema(n.ref, v, at)
		if f == nil {
			return nil
		}
		ref := fail(failRef, "")
		if f.kind == failGroup {
			ref.causes = f.causes
		} else {
			ref.causes = []*failure{f}
		}
		return ref
	}
	var fails []*failure
	add := func(f *failure) {
		if f != nil {
			fails = append(fails, f)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if n.maxProps > 0 && len(x) > n.maxProps {
			add(fail(failMaxProps, ""))
		}
		for _, r := range n.required {
			if _, has := x[r]; !has {
				add(fail(failRequired, r))
				break
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := n.props[k]; ok {
				add(checkSchema(p, x[k], append(at, k)))
			} else if n.addl != nil {
				add(checkSchema(n.addl, x[k], append(at, k)))
			}
		}
	case []any:
		if n.items != nil {
			for i, e := range x {
				add(checkSchema(n.items, e, append(at, strconv.Itoa(i))))
			}
		}
	}
	if len(n.anyOf) > 0 {
		var causes []*failure
		matched := false
		for _, b := range n.anyOf {
			f := checkSchema(b, v, at)
			if f == nil {
				matched = true
				break
			}
			causes = append(causes, f)
		}
		if !matched {
			f := fail(failAnyOf, "")
			f.causes = causes
			add(f)
		}
	}
	if len(n.oneOf) > 0 {
		var causes []*failure
		matched := false
		for _, b := range n.oneOf {
			f := checkSchema(b, v, at)
			if f != nil {
				if !matched {
					causes = append(causes, f)
				}
				continue
			}
			if matched {
				add(fail(failOneOf, "")) // a second branch matched too
				break
			}
			matched = true
		}
		if !matched {
			f := fail(failOneOf, "")
			f.causes = causes
			add(f)
		}
	}
	switch len(fails) {
	case 0:
		return nil
	case 1:
		return fails[0]
	}
	g := fail(failGroup, "")
	g.causes = fails
	return g
}

// typeMatches is whether v, a value of the document as jsonValue gives it,
// is of JSON type t. An integer is a TOML integer: serde's integer types
// refuse a float, 2.0 too (Codex 0.169: "invalid type: floating point
// `2.0`, expected usize"), where JSON Schema's integer takes it. A number
// is either, as serde's f64 takes an integer.
func typeMatches(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		switch v.(type) {
		case int64, float64:
			return true
		}
		return false
	case "integer":
		_, ok := v.(int64)
		return ok
	}
	return false
}
