package config

import (
	"maps"
	"slices"
)

// unimplemented are the keys Codex 0.169 acts on (its ConfigToml, at the
// top level or in a profile) that codexd reads and does not act on, with
// what they would have done. Keys only the TUI reads (tui, notice,
// file_opener, check_for_update_on_startup...) are not listed: a TUI
// reads them from its own config.
var unimplemented = map[string]string{
	"approvals_reviewer":                 "choose who reviews approvals",
	"forced_login_method":                "restrict the sign-in method",
	"forced_chatgpt_workspace_id":        "restrict the ChatGPT workspace",
	"cli_auth_credentials_store":         "keep the sign-in in a keyring",
	"chatgpt_base_url":                   "use another ChatGPT backend",
	"history":                            "keep a message history file",
	"hide_agent_reasoning":               "hide the reasoning events",
	"show_raw_agent_reasoning":           "show the raw reasoning",
	"model_supports_reasoning_summaries": "force reasoning summaries",
	"agents":                             "configure sub-agents",
	"hooks":                              "run hooks",
	"otel":                               "export telemetry",
	"zsh_path":                           "run commands with another zsh",
	"ghost_snapshot":                     "snapshot the work tree between turns",
	"experimental_use_unified_exec_tool": "choose the exec tool",
	"include_apply_patch_tool":           "choose the apply_patch tool",
	"mcp_oauth_credentials_store":        "keep MCP OAuth tokens elsewhere",
}

// unimplementedWarnings names each key of raw (the top level or the
// profile in use) that Codex would act on and codexd does not, once.
func unimplementedWarnings(raw map[string]any, profile string) []Warning {
	seen := map[string]bool{}
	for k, v := range raw {
		if _, ok := unimplemented[k]; ok && !inert(k, v) {
			seen[k] = true
		}
	}
	if profs, ok := raw["profiles"].(map[string]any); ok && profile != "" {
		if p, ok := profs[profile].(map[string]any); ok {
			for k := range p {
				if _, ok := unimplemented[k]; ok {
					seen[k] = true
				}
			}
		}
	}
	var out []Warning
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, Warning{
			Summary: "codexd ignores config key `" + k + "`",
			Details: "Codex would " + unimplemented[k] + "; codexd 0.2 does not implement it.",
		})
	}
	return out
}

// inert reports whether a key's value asks for nothing codexd would
// need to do: an [otel] table that exports nowhere is what codexd does
// anyway.
func inert(key string, v any) bool {
	if key != "otel" {
		return false
	}
	t, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, x := range t {
		switch k {
		case "exporter", "trace_exporter", "metrics_exporter":
			if x != "none" {
				return false
			}
		case "environment", "log_user_prompt":
		default:
			return false
		}
	}
	return true
}
