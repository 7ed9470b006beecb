// Package modelinfo is Codex 0.169's per-model metadata: for each model of
// its built-in catalog, and for a model it has no metadata for (its
// fallback), the facts that shape a request and a thread: the context
// window and auto-compact limit, how tool output is truncated, which shell
// and apply_patch tools the model gets, whether it calls tools in
// parallel, its reasoning efforts, verbosity, and which family of base
// instructions it is given.
//
// The built-in catalog (catalog.json) holds the facts of `codex debug
// models` for Codex 0.169 and nothing else (no prompt text, no
// descriptions). It was made with
//
//	CODEX_HOME=$(mktemp -d) unshare -rn "$CODEX_BIN" debug models
//
// keeping the fields Info has. A config's model_catalog_json replaces it,
// as in Codex; model_context_window, model_auto_compact_token_limit and
// tool_output_token_limit adjust the chosen entry (Info.With).
//
// The package is pure data and lookups: it must never read the network,
// start anything, or know about turns.
package modelinfo

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// Shell tool types (Codex's ConfigShellToolType).
const (
	ShellDefault      = "default"
	ShellLocal        = "local"
	ShellUnifiedExec  = "unified_exec"
	ShellDisabled     = "disabled"
	ShellShellCommand = "shell_command"
)

// apply_patch tool types.
const (
	ApplyPatchFreeform = "freeform"
	ApplyPatchFunction = "function"
)

// ToolModeCodeModeOnly is the tool mode of the models that get their tools
// in an additional_tools input item instead of the request's tools.
const ToolModeCodeModeOnly = "code_mode_only"

// Truncation modes.
const (
	TruncateTokens = "tokens"
	TruncateBytes  = "bytes"
)

// Instructions variants: which family of base instructions a model gets.
const (
	// InstructionsGeneral: the GPT-5 general family (gpt-5.5), with its
	// tools offered directly.
	InstructionsGeneral = "general"
	// InstructionsCodeMode: the code-mode family (gpt-6, gpt-5.6,
	// codex-auto-review...), whose tools come in an additional_tools item.
	InstructionsCodeMode = "code_mode"
	// InstructionsFallback: a model without metadata.
	InstructionsFallback = "fallback"
)

// TruncationPolicy bounds the tool output kept in history: Limit tokens
// or bytes.
type TruncationPolicy struct {
	Mode  string `json:"mode"`
	Limit int64  `json:"limit"`
}

// ReasoningLevel is one supported reasoning effort.
type ReasoningLevel struct {
	Effort string `json:"effort"`
}

// ServiceTier is one service tier a model offers.
type ServiceTier struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Upgrade names the model a client is invited to move to (the catalog's
// upgrade; its migration copy is not kept).
type Upgrade struct {
	Model string `json:"model"`
}

// Info is one model's metadata, with Codex's JSON field names (the shape
// of model_catalog_json entries).
type Info struct {
	Slug                          string           `json:"slug"`
	DisplayName                   string           `json:"display_name,omitempty"`
	DefaultReasoningLevel         string           `json:"default_reasoning_level,omitempty"`
	SupportedReasoningLevels      []ReasoningLevel `json:"supported_reasoning_levels"`
	ShellType                     string           `json:"shell_type,omitempty"`
	Visibility                    string           `json:"visibility,omitempty"`
	SupportedInAPI                bool             `json:"supported_in_api"`
	Priority                      int              `json:"priority"`
	Upgrade                       *Upgrade         `json:"upgrade,omitempty"`
	AdditionalSpeedTiers          []string         `json:"additional_speed_tiers,omitempty"`
	ServiceTiers                  []ServiceTier    `json:"service_tiers,omitempty"`
	DefaultServiceTier            string           `json:"default_service_tier,omitempty"`
	IncludeSkillsInstructions     bool             `json:"include_skills_usage_instructions"`
	IncludePluginInstructions     bool             `json:"include_plugin_usage_instructions"`
	IncludeAppsInstructions       bool             `json:"include_apps_usage_instructions"`
	DefaultReasoningSummary       string           `json:"default_reasoning_summary,omitempty"`
	SupportVerbosity              bool             `json:"support_verbosity"`
	DefaultVerbosity              string           `json:"default_verbosity,omitempty"`
	ApplyPatchToolType            string           `json:"apply_patch_tool_type,omitempty"`
	WebSearchToolType             string           `json:"web_search_tool_type,omitempty"`
	Truncation                    TruncationPolicy `json:"truncation_policy"`
	SupportsImageDetailOriginal   bool             `json:"supports_image_detail_original"`
	ContextWindow                 int64            `json:"context_window,omitempty"`
	MaxContextWindow              int64            `json:"max_context_window,omitempty"`
	AutoCompactTokenLimit         int64            `json:"auto_compact_token_limit,omitempty"`
	EffectiveContextWindowPercent int64            `json:"effective_context_window_percent"`
	ExperimentalSupportedTools    []string         `json:"experimental_supported_tools"`
	InputModalities               []string         `json:"input_modalities,omitempty"`
	SupportsSearchTool            bool             `json:"supports_search_tool"`
	UseResponsesLite              bool             `json:"use_responses_lite"`
	SupportsEffortUpdates         bool             `json:"supports_reasoning_effort_updates"`
	ToolMode                      string           `json:"tool_mode,omitempty"`
	MultiAgentVersion             string           `json:"multi_agent_version,omitempty"`
	MultiAgentReasoningEffort     string           `json:"multi_agent_reasoning_effort,omitempty"`
	ModelSpecialty                string           `json:"model_specialty,omitempty"`

	// Fallback is set on the metadata of a model the catalog does not
	// know (Codex's used_fallback_model_metadata).
	Fallback bool `json:"-"`
}

// Fallback is Codex 0.169's metadata for a model it knows nothing about
// (model_info_from_slug): a 272k window, output truncated at 10000 bytes,
// no apply_patch tool, no verbosity, reasoning summaries "auto".
func Fallback(slug string) Info {
	return Info{
		Slug: slug, DisplayName: slug, ShellType: ShellDefault, SupportedInAPI: true, Priority: 99,
		DefaultReasoningSummary: "auto", WebSearchToolType: "text",
		Truncation:    TruncationPolicy{Mode: TruncateBytes, Limit: 10_000},
		ContextWindow: 272_000, MaxContextWindow: 272_000, EffectiveContextWindowPercent: 95,
		InputModalities: []string{"text", "image"}, Fallback: true,
	}
}

// CodeMode reports whether the model gets its tools in an
// additional_tools input item rather than the request's tools.
func (i *Info) CodeMode() bool { return i.ToolMode == ToolModeCodeModeOnly }

// ParallelToolCalls is the request's parallel_tool_calls: Codex 0.169
// sends false to the models served by the Responses "lite" endpoint and
// true to the others, the fallback included.
func (i *Info) ParallelToolCalls() bool { return !i.UseResponsesLite }

// Instructions names the family of base instructions the model gets.
func (i *Info) Instructions() string {
	switch {
	case i.Fallback:
		return InstructionsFallback
	case i.CodeMode():
		return InstructionsCodeMode
	}
	return InstructionsGeneral
}

// Visible reports whether the model is shown in a model picker (Codex's
// visibility "list"; "hide" and "none" are listed only on request).
func (i *Info) Visible() bool { return i.Visibility == "list" }

// Efforts lists the supported reasoning efforts.
func (i *Info) Efforts() []string {
	out := make([]string, len(i.SupportedReasoningLevels))
	for k, l := range i.SupportedReasoningLevels {
		out[k] = l.Effort
	}
	return out
}

// ResolvedContextWindow is context_window, else max_context_window (0:
// unknown).
func (i *Info) ResolvedContextWindow() int64 {
	if i.ContextWindow > 0 {
		return i.ContextWindow
	}
	return i.MaxContextWindow
}

// EffectiveContextWindow is the part of the window usable for input
// (effective_context_window_percent of it), what Codex reports as the
// thread's model context window.
func (i *Info) EffectiveContextWindow() int64 {
	return i.ResolvedContextWindow() * i.EffectiveContextWindowPercent / 100
}

// AutoCompactLimit is the token count past which a thread is compacted:
// 90% of the context window, or the configured limit when that is lower;
// 0 when neither is known.
func (i *Info) AutoCompactLimit() int64 {
	cw := i.ResolvedContextWindow()
	ctx := cw * 9 / 10
	set := i.AutoCompactTokenLimit
	switch {
	case cw > 0 && set > 0:
		return min(set, ctx)
	case cw > 0:
		return ctx
	}
	return max(set, 0)
}

// Overrides are the config keys that adjust a model's metadata; nil means
// not set.
type Overrides struct {
	ContextWindow         *int64 // model_context_window
	AutoCompactTokenLimit *int64 // model_auto_compact_token_limit
	ToolOutputTokenLimit  *int64 // tool_output_token_limit
}

// With applies o as Codex does: the context window is capped by the
// model's max_context_window, the auto-compact limit replaces the
// model's, and tool_output_token_limit replaces the truncation limit (in
// bytes, four a token, for a model truncated by bytes).
func (i Info) With(o Overrides) Info {
	if o.ContextWindow != nil {
		cw := *o.ContextWindow
		if i.MaxContextWindow > 0 {
			cw = min(cw, i.MaxContextWindow)
		}
		i.ContextWindow = cw
	}
	if o.AutoCompactTokenLimit != nil {
		i.AutoCompactTokenLimit = *o.AutoCompactTokenLimit
	}
	if o.ToolOutputTokenLimit != nil {
		n := max(*o.ToolOutputTokenLimit, 0)
		if i.Truncation.Mode == TruncateBytes {
			i.Truncation = TruncationPolicy{Mode: TruncateBytes, Limit: n * 4}
		} else {
			i.Truncation = TruncationPolicy{Mode: TruncateTokens, Limit: n}
		}
	}
	return i
}

// Catalog is a set of models' metadata.
type Catalog struct {
	Models []Info `json:"models"`
}

//go:embed catalog.json
var builtinJSON []byte

var (
	builtinOnce sync.Once
	builtin     *Catalog
)

// Builtin is Codex 0.169's catalog. It is shared: callers must not modify
// it.
func Builtin() *Catalog {
	builtinOnce.Do(func() {
		c, err := Parse(builtinJSON)
		if err != nil {
			panic("modelinfo: the built-in catalog: " + err.Error())
		}
		builtin = c
	})
	return builtin
}

// maxCatalogBytes bounds a model_catalog_json file.
const maxCatalogBytes = 16 << 20

// Load reads a model_catalog_json file.
func Load(path string) (*Catalog, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("model_catalog_json: %w", err)
	}
	if st.Size() > maxCatalogBytes {
		return nil, fmt.Errorf("model_catalog_json %s: %d bytes, more than the %d allowed", path, st.Size(), maxCatalogBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model_catalog_json: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("model_catalog_json %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes a catalog in Codex's format ({"models": [...]}). Every
// entry needs a slug; absent fields take the fallback's values.
func Parse(b []byte) (*Catalog, error) {
	var raw struct {
		Models []json.RawMessage `json:"models"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	if raw.Models == nil {
		return nil, fmt.Errorf(`no "models" list`)
	}
	c := &Catalog{Models: make([]Info, 0, len(raw.Models))}
	for n, m := range raw.Models {
		info := Fallback("")
		info.Fallback = false
		info.DisplayName = ""
		if err := json.Unmarshal(m, &info); err != nil {
			return nil, fmt.Errorf("models[%d]: %w", n, err)
		}
		if info.Slug == "" {
			return nil, fmt.Errorf("models[%d]: no slug", n)
		}
		if info.DisplayName == "" {
			info.DisplayName = info.Slug
		}
		if info.Truncation.Mode != TruncateTokens && info.Truncation.Mode != TruncateBytes {
			return nil, fmt.Errorf("models[%d] (%s): truncation_policy mode %q is neither tokens nor bytes", n, info.Slug, info.Truncation.Mode)
		}
		if info.Truncation.Limit < 0 || info.ContextWindow < 0 || info.MaxContextWindow < 0 ||
			info.EffectiveContextWindowPercent < 0 || info.EffectiveContextWindowPercent > 100 {
			return nil, fmt.Errorf("models[%d] (%s): a negative limit or window, or a percentage outside 0-100", n, info.Slug)
		}
		c.Models = append(c.Models, info)
	}
	return c, nil
}

// Listed is the catalog in the order Codex's model/list gives it: by
// priority, lowest first (ties keep the catalog's order). The entries are
// copies the caller owns.
func (c *Catalog) Listed() []Info {
	out := make([]Info, len(c.Models))
	for k := range c.Models {
		out[k] = c.Models[k].clone()
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Priority < out[b].Priority })
	return out
}

func (i Info) clone() Info {
	i.SupportedReasoningLevels = append([]ReasoningLevel(nil), i.SupportedReasoningLevels...)
	i.AdditionalSpeedTiers = append([]string(nil), i.AdditionalSpeedTiers...)
	i.ServiceTiers = append([]ServiceTier(nil), i.ServiceTiers...)
	i.InputModalities = append([]string(nil), i.InputModalities...)
	i.ExperimentalSupportedTools = append([]string(nil), i.ExperimentalSupportedTools...)
	if i.Upgrade != nil {
		u := *i.Upgrade
		i.Upgrade = &u
	}
	return i
}

// Lookup returns the metadata of model as Codex finds it: the entry whose
// slug is the longest prefix of model, else (for "namespace/name", the
// namespace of letters, digits, '_' and '-') the longest prefix of name,
// else the fallback.
func (c *Catalog) Lookup(model string) Info {
	if i, ok := c.longestPrefix(model); ok {
		return i
	}
	if ns, name, ok := strings.Cut(model, "/"); ok && ns != "" && !strings.Contains(name, "/") && validNamespace(ns) {
		if i, ok := c.longestPrefix(name); ok {
			return i
		}
	}
	return Fallback(model)
}

func (c *Catalog) longestPrefix(model string) (Info, bool) {
	best := -1
	for k := range c.Models {
		s := c.Models[k].Slug
		if strings.HasPrefix(model, s) && (best < 0 || len(s) > len(c.Models[best].Slug)) {
			best = k
		}
	}
	if best < 0 {
		return Info{}, false
	}
	// The caller owns its copy's slices.
	return c.Models[best].clone(), true
}

func validNamespace(ns string) bool {
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Lookup finds model in the built-in catalog.
func Lookup(model string) Info { return Builtin().Lookup(model) }
