package config

import (
	"testing"

	"github.com/BurntSushi/toml"
)

// TestCheckCodexTypes: a wrongly typed value of a key Codex knows, and
// codexd does not read, gets the message Codex 0.169's config write
// answered for it (observed side by side, differential session
// config-write); keys Codex does not know, and bounds serde does not
// enforce, pass.
func TestCheckCodexTypes(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"[tui]\nanimations = \"yes\"", "invalid type: string \"yes\", expected a boolean\nin `tui.animations`\n"},
		{"[history]\nmax_bytes = \"big\"", "invalid type: string \"big\", expected usize\nin `history.max_bytes`\n"},
		{"[history]\nmax_bytes = -5", "invalid value: integer `-5`, expected usize\nin `history.max_bytes`\n"},
		{"model_context_window = \"x\"", "invalid type: string \"x\", expected i64\nin `model_context_window`\n"},
		{"notify = \"x\"", "invalid type: string \"x\", expected a sequence\nin `notify`\n"},
		{"notify = [1]", "invalid type: integer `1`, expected a string\nin `notify`\n"},
		{"[tui]\nnotification_method = \"loud\"", "unknown variant `loud`, expected one of `auto`, `osc9`, `osc777`, `bel`\nin `tui`\n"},
		{"mcp_oauth_callback_port = -1", "invalid value: integer `-1`, expected u16\nin `mcp_oauth_callback_port`\n"},
		{"mcp_oauth_callback_port = 70000", "invalid value: integer `70000`, expected u16\nin `mcp_oauth_callback_port`\n"},
		{"project_doc_max_bytes = 1.5", "invalid type: floating point `1.5`, expected usize\nin `project_doc_max_bytes`\n"},
		{"tool_output_token_limit = true", "invalid type: boolean `true`, expected usize\nin `tool_output_token_limit`\n"},
		{"[tui]\nnotifications = \"x\"", "data did not match any variant of untagged enum Notifications\nin `tui`\n"},
		{"[features]\nmulti_agent_v2 = \"x\"", "data did not match any variant of untagged enum FeatureToml\nin `features.multi_agent_v2`\n"},
		{"[shell_environment_policy]\ninherit = \"bogus\"", "unknown variant `bogus`, expected one of `core`, `all`, `none`\nin `shell_environment_policy.inherit`\n"},
		{"tui = 5", "invalid type: integer `5`, expected struct Tui\nin `tui`\n"},
		{"[model_providers.p]\nrequest_max_retries = \"3\"", "invalid type: string \"3\", expected u64\nin `model_providers.p.request_max_retries`\n"},
		{"model_verbosity = 3", "invalid type: unit variant, expected string only\nin `model_verbosity`\n"},
		{"[otel]\nexporter = 5", "invalid type: unit variant, expected string only\nin `otel.exporter`\n"},
		{"[[skills.config]]\nname = \"x\"", "missing field `enabled`\nin `skills.config`\n"},
		// Enum variants, paths and enum kinds as Codex 0.169 has them
		// where the newer schema differs (config-write-types).
		{"web_search = \"zz\"", "unknown variant `zz`, expected one of `disabled`, `cached`, `indexed`, `live`\nin `web_search`\n"},
		{"[windows]\nsandbox = \"zz\"", "unknown variant `zz`, expected one of `elevated`, `unelevated`, `mxc`\nin `windows.sandbox`\n"},
		{"[realtime]\nversion = \"zz\"", "unknown variant `zz`, expected one of `v1`, `v2`, `v3`\nin `realtime.version`\n"},
		{"[apps.p]\napprovals_reviewer = \"zz\"", "unknown variant `zz`, expected one of `user`, `auto_review`, `guardian_subagent`\nin `apps`\n"},
		{"[apps._default]\nenabled = \"x\"", "invalid type: string \"x\", expected a boolean\nin `apps._default.enabled`\n"},
		{"[tui]\nalternate_screen = \"zz\"", "unknown variant `zz`, expected one of `auto`, `always`, `never`\nin `tui.alternate_screen`\n"},
		{"experimental_thread_store = \"zz\"", "invalid type: string \"zz\", expected internally tagged enum ThreadStoreToml\nin `experimental_thread_store`\n"},
		{"[experimental_thread_store]\ntype = \"zz\"", "unknown variant `zz`, expected `local` or `in_memory`\nin `experimental_thread_store.type`\n"},
		{"[[hooks.Stop]]\nhooks = [{type = \"zz\"}]", "unknown variant `zz`, expected one of `command`, `mcp_tool`, `prompt`, `agent`\nin `hooks`\n"},
		{"[[hooks.Stop]]\nhooks = [\"x\"]", "invalid type: string \"x\", expected internally tagged enum HookHandlerConfig\nin `hooks`\n"},
		{"[tools]\nweb_search = \"live\"", "data did not match any variant of untagged enum WebSearchToolConfigInput\nin `tools.web_search`\n"},
		{"[tui.keymap.chat]\ninterrupt_turn = 5", "invalid type: integer `5`, expected a keybinding string or a list of keybinding strings\nin `tui.keymap.chat.interrupt_turn`\n"},
		{"[tui.model_availability_nux]\nx = -1", "invalid value: integer `-1`, expected u32\nin `tui.model_availability_nux`\n"},
		// Observed from Codex 0.169's config/value/write: a float is no
		// integer, and a hook handler's own keys are held to their types.
		{"project_doc_max_bytes = 2.0", "invalid type: floating point `2.0`, expected usize\nin `project_doc_max_bytes`\n"},
		{"model_context_window = 3.0", "invalid type: floating point `3.0`, expected i64\nin `model_context_window`\n"},
		{"[[hooks.Stop]]\nhooks = [{type = \"command\", command = 5}]", "invalid type: integer `5`, expected a string\nin `hooks`\n"},
		{"[[hooks.Stop]]\nhooks = [{type = \"command\", command = \"x\", async = \"zz\"}]", "invalid type: string \"zz\", expected a boolean\nin `hooks`\n"},
		// A table for an enum (observed from Codex 0.169's
		// config/value/write): its one key is the variant.
		{"[otel]\nexporter = {}", "wanted exactly 1 element, found 0 elements\nin `otel.exporter`\n"},
		{"[otel.exporter]\notlp-http = {endpoint = \"e\", protocol = \"json\"}\notlp-grpc = {endpoint = \"e\"}", "wanted exactly 1 element, more than 1 element\nin `otel.exporter`\n"},
		{"[otel.exporter]\nzz = 1", "unknown variant `zz`, expected one of `none`, `statsig`, `otlp-http`, `otlp-grpc`\nin `otel.exporter`\n"},
		{"[otel.exporter]\notlp-http = 5", "invalid type: integer `5`, expected struct variant OtelExporterKind::OtlpHttp\nin `otel.exporter`\n"},
		{"[otel.exporter.otlp-http]\nendpoint = \"e\"", "missing field `protocol`\nin `otel.exporter`\n"},
		{"[otel.exporter.otlp-http]\nendpoint = 5\nprotocol = \"json\"", "invalid type: integer `5`, expected a string\nin `otel.exporter.endpoint`\n"},
		{"[otel.exporter.otlp-http]\nendpoint = \"e\"\nprotocol = \"zz\"", "unknown variant `zz`, expected `binary` or `json`\nin `otel.exporter.protocol`\n"},
		{"[otel.exporter.otlp-http]\nendpoint = \"e\"\nprotocol = {}", "wanted exactly 1 element, found 0 elements\nin `otel.exporter.protocol`\n"},
		{"[otel.exporter]\nnone = 1", "expected table, found integer\nin `otel.exporter`\n"},
		{"[otel.exporter]\nnone = 1.5", "expected table, found float\nin `otel.exporter`\n"},
		{"[otel.exporter]\nnone = \"s\"", "expected table, found string\nin `otel.exporter`\n"},
		{"[otel.exporter]\nnone = {x = 1}", "expected empty table\nin `otel.exporter`\n"},
		{"[otel.exporter]\nnone = [1]", "expected empty array\nin `otel.exporter`\n"},
		{"approval_policy = {granular = 5}", "invalid type: integer `5`, expected struct GranularApprovalConfig\nin `approval_policy`\n"},
		{"approval_policy = {granular = {}}", "missing field `sandbox_approval`\nin `approval_policy`\n"},
		{"approval_policy = {granular = {sandbox_approval = true}}", "missing field `rules`\nin `approval_policy`\n"},
		{"approval_policy = {granular = {sandbox_approval = \"x\"}}", "invalid type: string \"x\", expected a boolean\nin `approval_policy.sandbox_approval`\n"},
		{"approval_policy = {zz = {}}", "unknown variant `zz`, expected one of `untrusted`, `on-failure`, `on-request`, `granular`, `never`\nin `approval_policy`\n"},
		{"approval_policy = {on-request = 1}", "expected table, found integer\nin `approval_policy`\n"},
		{"approval_policy = {granular = {}, zz = 1}", "wanted exactly 1 element, more than 1 element\nin `approval_policy`\n"},
		{"web_search = {}", "wanted exactly 1 element, found 0 elements\nin `web_search`\n"},
		{"web_search = {live = true}", "expected table, found boolean\nin `web_search`\n"},
		{"[tui]\nalternate_screen = {zz = {}}", "unknown variant `zz`, expected one of `auto`, `always`, `never`\nin `tui.alternate_screen`\n"},
		{"[tui]\nalternate_screen = {auto = 5}", "expected table, found integer\nin `tui.alternate_screen`\n"},
		{"[history]\npersistence = {none = \"x\"}", "expected table, found string\nin `history.persistence`\n"},
		{"[shell_environment_policy]\ninherit = {all = {}, core = {}}", "wanted exactly 1 element, more than 1 element\nin `shell_environment_policy.inherit`\n"},
		{"[otel.exporter]\notlp-http = {endpoint = \"e\", protocol = \"json\"}\nzz = 1", "wanted exactly 1 element, more than 1 element\nin `otel.exporter`\n"},
		// Below a table Codex names for what is inside it.
		{"[tui]\nnotification_method = {}", "invalid value: map, expected map with a single key\nin `tui`\n"},
		{"[tui]\nnotification_method = {a = 1, b = 1}", "invalid value: map, expected map with a single key\nin `tui`\n"},
		{"[tui]\nnotification_method = {zz = 1}", "unknown variant `zz`, expected one of `auto`, `osc9`, `osc777`, `bel`\nin `tui`\n"},
		{"[tui]\nnotification_method = {bel = 1}", "invalid type: integer `1`, expected unit\nin `tui`\n"},
		{"[apps.p]\ndefault_tools_approval_mode = {}", "invalid value: map, expected map with a single key\nin `apps`\n"},
		// A unit variant's value there: [tui] takes an empty table,
		// [apps] no table at all (observed).
		{"[tui]\nnotification_method = {bel = {}}", ""},
		{"[tui]\nnotification_condition = {always = {}}", ""},
		{"[tui]\nnotification_method = {bel = []}", "invalid type: sequence, expected unit\nin `tui`\n"},
		{"[tui]\nnotification_method = {bel = {a = 1}}", "invalid type: map, expected unit\nin `tui`\n"},
		{"[tui]\nnotification_method = {bel = \"s\"}", "invalid type: string \"s\", expected unit\nin `tui`\n"},
		{"[apps.p]\ndefault_tools_approval_mode = {auto = {}}", "invalid type: map, expected unit\nin `apps`\n"},
		{"[apps.p]\ndefault_tools_approval_mode = {auto = []}", "invalid type: sequence, expected unit\nin `apps`\n"},
		{"[apps.p]\ndefault_tools_approval_mode = {auto = \"s\"}", "invalid type: string \"s\", expected unit\nin `apps`\n"},
		// An empty array for a struct: serde reads a sequence's elements
		// as the fields, and the first is required (observed).
		{"approval_policy = {granular = []}", "invalid length 0, expected struct GranularApprovalConfig with 5 elements\nin `approval_policy`\n"},
		{"[otel.exporter]\notlp-http = []", "invalid length 0, expected struct variant OtelExporterKind::OtlpHttp with 4 elements\nin `otel.exporter`\n"},
		{"[otel.exporter]\notlp-grpc = []", "invalid length 0, expected struct variant OtelExporterKind::OtlpGrpc with 3 elements\nin `otel.exporter`\n"},
		{"[model_providers.p]\nauth = []", "invalid length 0, expected struct ModelProviderAuthInfo with 5 elements\nin `model_providers.p.auth`\n"},
		{"[tool_suggest]\ndisabled_tools = [[]]", "invalid length 0, expected struct ToolSuggestDisabledTool with 2 elements\nin `tool_suggest.disabled_tools`\n"},
		{"[skills]\nconfig = [[]]", "invalid length 2, expected struct SkillConfig with 3 elements\nin `skills.config`\n"},
		{"model_verbosity = {low = []}", ""},
		{"model_verbosity = {low = [1]}", "expected empty array\nin `model_verbosity`\n"},
		// A struct's first missing key in its Rust declaration order.
		{"[[tool_suggest.disabled_tools]]", "missing field `type`\nin `tool_suggest.disabled_tools`\n"},
		{"[[tool_suggest.discoverables]]", "missing field `type`\nin `tool_suggest.discoverables`\n"},
		{"[otel.exporter.otlp-grpc]", "missing field `endpoint`\nin `otel.exporter`\n"},
		{"[[hooks.Stop]]\nhooks = [{type = \"command\"}]", "missing field `command`\nin `hooks`\n"},
		// Accepted by Codex 0.169.
		{"[otel.exporter]\nnone = {}", ""},
		{"[otel.exporter]\nnone = []", ""},
		{"approval_policy = {never = {}}", ""},
		{"[tui]\nalternate_screen = {auto = {}}", ""},
		{"[shell_environment_policy]\ninherit = {all = {}}", ""},
		{"model_reasoning_effort = \"zz\"\nplan_mode_reasoning_effort = \"zz\"\n[tools]\nweb_search = true\n[experimental_thread_store]\ntype = \"local\"", ""},
		{"zzz_unknown = 1\n[tui]\nzzz = 1", ""},
		{"[experimental_thread_store]\ntype = \"local\"\nzz = 1", ""},
		{"[agents]\nmax_depth = 0\n[memories]\nmax_rollouts_per_startup = 500", ""},
		{"model = \"m\"\n[tui]\nanimations = false\nnotifications = [\"a\"]\n[features]\nmulti_agent_v2 = true\n[history]\nmax_bytes = 10", ""},
		// The first bad key, in key order, is the one named.
		{"notify = 1\nmodel_context_window = \"x\"", "invalid type: string \"x\", expected i64\nin `model_context_window`\n"},
	} {
		doc := map[string]any{}
		if _, err := toml.Decode(tc.doc, &doc); err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		if got := CheckCodexTypes(doc); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.doc, got, tc.want)
		}
	}
}

// TestFirstTypeErrorInDocumentOrder: of several bad values Codex 0.169
// names the first in the document (observed with config/batchWrite, the
// edits' keys in either order).
func TestFirstTypeErrorInDocumentOrder(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"notify = 1\nmodel_context_window = \"x\"", "invalid type: integer `1`, expected a sequence\nin `notify`\n"},
		{"model_context_window = \"x\"\nnotify = 1", "invalid type: string \"x\", expected i64\nin `model_context_window`\n"},
		{"[tui]\ntheme = 5\nanimations = \"x\"", "invalid type: integer `5`, expected a string\nin `tui.theme`\n"},
		{"web_search = 5\n[agents]\nmax_depth = \"x\"", "invalid type: unit variant, expected string only\nin `web_search`\n"},
		{"[[skills.config]]\nname = \"x\"\n[history]\nmax_bytes = \"y\"", "missing field `enabled`\nin `skills.config`\n"},
	} {
		doc := map[string]any{}
		md, err := toml.Decode(tc.doc, &doc)
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		var keys [][]string
		for _, k := range md.Keys() {
			keys = append(keys, k)
		}
		got, ok := FirstTypeError(CodexTypeErrors(doc), keys)
		if !ok || got.Msg != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.doc, got.Msg, tc.want)
		}
	}
	if _, ok := FirstTypeError(nil, nil); ok {
		t.Error("no errors, yet a first one")
	}
}

// TestMCPTransportErrors: a server table whose values are well typed is
// refused for its transport as Codex 0.169 refuses it; one with a wrongly
// typed value is named for that value only.
func TestMCPTransportErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"[mcp_servers.p]\ndefault_tools_approval_mode = {auto = {}}", "invalid transport\nin `mcp_servers.p`\n"},
		{"[mcp_servers.p]\ndefault_tools_approval_mode = \"zz\"", ""},
		{"[mcp_servers.p]\ncommand = \"c\"\nstartup_timeout_sec = 5", ""},
		{"[mcp_servers.p]\nurl = \"http://x\"", ""},
		{"[mcp_servers.p]\ncommand = \"c\"\nurl = \"http://x\"", "url is not supported for stdio\nin `mcp_servers.p`\n"},
	} {
		doc := map[string]any{}
		if _, err := toml.Decode(tc.doc, &doc); err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		got := ""
		if errs := MCPTransportErrors(doc, CodexTypeErrors(doc)); len(errs) > 0 {
			got = errs[0].Msg
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q", tc.doc, got, tc.want)
		}
	}
}
