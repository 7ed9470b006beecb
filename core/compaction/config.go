package compaction

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Options are the compaction settings of config.toml.
type Options struct {
	// ContextWindow is model_context_window: the window of every model,
	// over what the model's metadata says; 0 when unset.
	ContextWindow int64
	// AutoCompactTokenLimit is model_auto_compact_token_limit; 0 when
	// unset.
	AutoCompactTokenLimit int64
	// Prompt replaces DefaultPrompt: compact_prompt, or the content of
	// experimental_compact_prompt_file (which wins, as in Codex).
	Prompt string
}

// Lookup returns a config.toml setting: the value the caller's config
// path gives key (the profile in use, else the top level, -c overrides
// applied), and whether it is set.
type Lookup func(key string) (any, bool)

// Raw is the Lookup of a bare TOML tree, for callers with no profile.
func Raw(tree map[string]any) Lookup {
	return func(key string) (any, bool) { v, ok := tree[key]; return v, ok }
}

// FromConfig reads the options through get, so that a profile sets them as
// it sets every other key. A relative prompt file is taken from codexHome.
// A value of the wrong type, or a prompt file that cannot be read, is an
// error that names the key.
func FromConfig(get Lookup, codexHome string) (Options, error) {
	var o Options
	var err error
	if o.ContextWindow, err = positive(get, "model_context_window"); err != nil {
		return o, err
	}
	if o.AutoCompactTokenLimit, err = positive(get, "model_auto_compact_token_limit"); err != nil {
		return o, err
	}
	if v, ok := get("compact_prompt"); ok {
		s, ok := v.(string)
		if !ok {
			return o, fmt.Errorf("compact_prompt: expected a string")
		}
		o.Prompt = s
	}
	if v, ok := get("experimental_compact_prompt_file"); ok {
		p, ok := v.(string)
		if !ok || p == "" {
			return o, fmt.Errorf("experimental_compact_prompt_file: expected a path")
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(codexHome, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return o, fmt.Errorf("experimental_compact_prompt_file: %w", err)
		}
		o.Prompt = string(b)
	}
	if strings.TrimSpace(o.Prompt) == "" {
		o.Prompt = ""
	}
	return o, nil
}

func positive(get Lookup, key string) (int64, error) {
	v, ok := get(key)
	if !ok {
		return 0, nil
	}
	n, ok := v.(int64)
	if !ok || n < 0 {
		return 0, fmt.Errorf("%s: expected a non-negative integer", key)
	}
	return n, nil
}

// PromptOr is the compaction prompt: o.Prompt, else DefaultPrompt.
func (o Options) PromptOr() string {
	if o.Prompt != "" {
		return o.Prompt
	}
	return DefaultPrompt
}
