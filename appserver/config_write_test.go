package appserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
)

// configEnv is a server whose core's CODEX_HOME holds config.toml = src.
func configEnv(t *testing.T, src string, cfg Config) (*env, *jclient, string) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if src != "" {
		if err := os.WriteFile(path, []byte(src), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, agenttest.Options{Config: agent.Config{CodexHome: home}}, cfg)
	c := e.dial("cfg")
	c.initialize(nil)
	return e, c, path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const commentedConfig = `# my settings
model = "gpt-5"   # the usual

[features]
# on purpose
plugins = false
`

func TestConfigValueWriteKeepsFormatting(t *testing.T) {
	_, c, path := configEnv(t, commentedConfig, Config{})
	r := c.call(appproto.MethodConfigValueWrite, map[string]any{"keyPath": "model", "value": "o3", "mergeStrategy": "replace"})
	if got := r.str(t, "/status"); got != "ok" {
		t.Fatalf("status %q", got)
	}
	if got := r.str(t, "/filePath"); got != path {
		t.Fatalf("filePath %q, want %q", got, path)
	}
	c.call(appproto.MethodConfigValueWrite, map[string]any{"keyPath": "features.shell_tool", "value": true, "mergeStrategy": "upsert"})
	want := strings.Replace(commentedConfig, `"gpt-5"`, `"o3"`, 1) + "shell_tool = true\n"
	if got := readFile(t, path); got != want {
		t.Fatalf("config.toml:\n%s\nwant:\n%s", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v (%v), want 0640 kept", fi.Mode(), err)
	}
	// The version is Codex's: the SHA-256 of the values as sorted JSON.
	if got, want := r.str(t, "/version"), configVersion(map[string]any{"model": "o3", "features": map[string]any{"plugins": false}}); got != want {
		t.Fatalf("version %s, want %s", got, want)
	}
}

func TestConfigBatchWriteAllOrNothing(t *testing.T) {
	_, c, path := configEnv(t, commentedConfig, Config{})
	e := c.callErr(appproto.MethodConfigBatchWrite, map[string]any{"edits": []map[string]any{
		{"keyPath": "model", "value": "o3", "mergeStrategy": "replace"},
		{"keyPath": "approval_policy", "value": "bad", "mergeStrategy": "replace"},
	}})
	if e.Code != -32600 || !strings.Contains(string(e.Data), `"configValidationError"`) ||
		e.Message != "Invalid configuration: unknown variant `bad`, expected one of `untrusted`, `on-failure`, `on-request`, `granular`, `never`\nin `approval_policy`\n" {
		t.Fatalf("error %d %q %s", e.Code, e.Message, e.Data)
	}
	if got := readFile(t, path); got != commentedConfig {
		t.Fatalf("a refused batch changed the file:\n%s", got)
	}
}

// TestConfigBatchWriteNamesTheFirstBadValue: of several wrongly typed
// values Codex 0.169 names the first in the document, whether codexd reads
// its key or not (observed with the edits in both orders).
func TestConfigBatchWriteNamesTheFirstBadValue(t *testing.T) {
	_, c, _ := configEnv(t, commentedConfig, Config{})
	edit := func(k string, v any) map[string]any {
		return map[string]any{"keyPath": k, "value": v, "mergeStrategy": "replace"}
	}
	for _, tc := range []struct {
		edits []map[string]any
		want  string
	}{
		{[]map[string]any{edit("notify", 1), edit("model_context_window", "x")}, "invalid type: integer `1`, expected a sequence\nin `notify`\n"},
		{[]map[string]any{edit("model_context_window", "x"), edit("notify", 1)}, "invalid type: string \"x\", expected i64\nin `model_context_window`\n"},
		{[]map[string]any{edit("web_search", 5), edit("sandbox_mode", 5)}, "invalid type: unit variant, expected string only\nin `web_search`\n"},
		{[]map[string]any{edit("tui.theme", 5), edit("tui.animations", "x")}, "invalid type: integer `5`, expected a string\nin `tui.theme`\n"},
	} {
		e := c.callErr(appproto.MethodConfigBatchWrite, map[string]any{"edits": tc.edits})
		if e.Message != "Invalid configuration: "+tc.want {
			t.Errorf("%v: %q, want %q", tc.edits, e.Message, tc.want)
		}
	}
}

func TestConfigWriteErrors(t *testing.T) {
	_, c, path := configEnv(t, commentedConfig, Config{})
	cases := []struct {
		params   map[string]any
		code     string
		msg      string
		protocol bool // a decode error, without error.data
	}{
		{map[string]any{"keyPath": "model", "value": 5, "mergeStrategy": "replace"}, "configValidationError",
			"Invalid configuration: invalid type: integer `5`, expected a string\nin `model`\n", false},
		{map[string]any{"keyPath": " ", "value": 1, "mergeStrategy": "replace"}, "configValidationError", "keyPath must not be empty", false},
		{map[string]any{"keyPath": "a..b", "value": 1, "mergeStrategy": "replace"}, "configValidationError", "keyPath segments must not be empty", false},
		{map[string]any{"keyPath": "model.x", "value": 1, "mergeStrategy": "replace"}, "configValidationError", "cannot set value on non-table parent", false},
		{map[string]any{"keyPath": "model", "value": "x", "mergeStrategy": "replace", "expectedVersion": "bogus"}, "configVersionConflict",
			"Configuration was modified since last read. Fetch latest version and retry.", false},
		{map[string]any{"keyPath": "model", "value": "x", "mergeStrategy": "replace", "filePath": "/elsewhere/config.toml"}, "configLayerReadonly",
			"Only writes to the user config are allowed", false},
		{map[string]any{"keyPath": "model", "value": "x", "mergeStrategy": "replace", "filePath": "config.toml"}, "configLayerReadonly",
			"Only writes to the user config are allowed", false},
		{map[string]any{"keyPath": "features.x", "value": "yes", "mergeStrategy": "replace"}, "configValidationError",
			"Invalid configuration: invalid type: string \"yes\", expected a boolean\nin `features`\n", false},
		// Keys codexd does not read are held to Codex's types too, with
		// the messages Codex 0.169 answered (differential session
		// config-write).
		{map[string]any{"keyPath": "tui.animations", "value": "yes", "mergeStrategy": "replace"}, "configValidationError",
			"Invalid configuration: invalid type: string \"yes\", expected a boolean\nin `tui.animations`\n", false},
		{map[string]any{"keyPath": "history.max_bytes", "value": -5, "mergeStrategy": "replace"}, "configValidationError",
			"Invalid configuration: invalid value: integer `-5`, expected usize\nin `history.max_bytes`\n", false},
		{map[string]any{"keyPath": "features.multi_agent_v2", "value": "x", "mergeStrategy": "replace"}, "configValidationError",
			"Invalid configuration: data did not match any variant of untagged enum FeatureToml\nin `features.multi_agent_v2`\n", false},
		{map[string]any{"keyPath": "model_verbosity", "value": 3, "mergeStrategy": "replace"}, "configValidationError",
			"Invalid configuration: invalid type: unit variant, expected string only\nin `model_verbosity`\n", false},
		{map[string]any{"keyPath": "model", "value": "x", "mergeStrategy": "merge"}, "",
			"Invalid request: unknown variant `merge`, expected `replace` or `upsert`", true},
		{map[string]any{"keyPath": "model", "mergeStrategy": "replace"}, "", "Invalid request: missing field `value`", true},
		// A value Codex 0.169 refuses to start with (codexd too, since
		// 7cb1e32): writing it would leave a server that cannot restart.
		{map[string]any{"keyPath": "approval_policy", "value": "untrusted", "mergeStrategy": "replace"}, "configValidationError",
			`Invalid configuration: approval_policy = "untrusted" is no longer supported; remove this setting`, false},
	}
	for _, tc := range cases {
		e := c.callErr(appproto.MethodConfigValueWrite, tc.params)
		if e.Code != -32600 || e.Message != tc.msg {
			t.Errorf("%v: %d %q, want -32600 %q", tc.params, e.Code, e.Message, tc.msg)
		}
		if !tc.protocol && !strings.Contains(string(e.Data), `"config_write_error_code":"`+tc.code+`"`) {
			t.Errorf("%v: data %s, want %s", tc.params, e.Data, tc.code)
		}
	}
	if got := readFile(t, path); got != commentedConfig {
		t.Fatalf("refused writes changed the file:\n%s", got)
	}
}

func TestConfigWriteVersionAndNoop(t *testing.T) {
	_, c, path := configEnv(t, "", Config{})
	r := c.call(appproto.MethodConfigValueWrite, map[string]any{"keyPath": "model", "value": "o3", "mergeStrategy": "replace"})
	v := r.str(t, "/version")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new config.toml mode %v (%v), want 0600", fi, err)
	}
	// The same value again changes nothing; the version holds, and an
	// expectedVersion that matches is accepted.
	r = c.call(appproto.MethodConfigValueWrite, map[string]any{"keyPath": "model", "value": "o3", "mergeStrategy": "replace", "expectedVersion": v})
	if r.str(t, "/version") != v {
		t.Fatalf("version moved on a no-op write")
	}
	// Removing a key that is not there, and an empty batch, are no-ops.
	c.call(appproto.MethodConfigValueWrite, map[string]any{"keyPath": "nothere.x", "value": nil, "mergeStrategy": "replace"})
	c.call(appproto.MethodConfigBatchWrite, map[string]any{"edits": []any{}})
	if got := readFile(t, path); got != "model = \"o3\"\n" {
		t.Fatalf("config.toml %q", got)
	}
	c.call(appproto.MethodConfigValueWrite, map[string]any{"keyPath": "model", "value": nil, "mergeStrategy": "replace"})
	if got := readFile(t, path); got != "" {
		t.Fatalf("config.toml after removing model: %q", got)
	}
}

func TestConfigWriteAppliesToNewThreads(t *testing.T) {
	_, c, _ := configEnv(t, "", Config{Requirements: &Requirements{AllowedSandboxModes: []string{"read-only", "workspace-write"}}})
	c.call(appproto.MethodConfigBatchWrite, map[string]any{"edits": []map[string]any{
		{"keyPath": "model", "value": "saved-model", "mergeStrategy": "replace"},
		{"keyPath": "approval_policy", "value": "on-request", "mergeStrategy": "replace"},
		{"keyPath": "sandbox_mode", "value": "danger-full-access", "mergeStrategy": "replace"},
	}})
	r := c.call(appproto.MethodThreadStart, map[string]any{})
	if got := r.str(t, "/model"); got != "saved-model" {
		t.Fatalf("new thread's model %q, want the saved one", got)
	}
	if got := r.str(t, "/approvalPolicy"); got != "on-request" {
		t.Fatalf("new thread's approval %q", got)
	}
	// The requirements do not allow the saved sandbox: the thread keeps
	// the server's.
	if got := r.str(t, "/sandbox/type"); got != "workspaceWrite" {
		t.Fatalf("new thread's sandbox %q", got)
	}
	// A thread/start that names a model still wins.
	r = c.call(appproto.MethodThreadStart, map[string]any{"model": "asked"})
	if got := r.str(t, "/model"); got != "asked" {
		t.Fatalf("model %q", got)
	}
	read := c.call(appproto.MethodConfigRead, map[string]any{})
	if got := read.str(t, "/config/model"); got != "saved-model" {
		t.Fatalf("config/read model %q", got)
	}
}

func init() {
	responseSchema[appproto.MethodConfigValueWrite] = "v2/ConfigWriteResponse"
	responseSchema[appproto.MethodConfigBatchWrite] = "v2/ConfigWriteResponse"
}

// An upsert merges into the table in place; a test that the merge is not
// mistaken for a no-op (it once was: the old value was the merged map).
func TestConfigWriteUpsertMerges(t *testing.T) {
	_, c, path := configEnv(t, "model = \"m\"\n\n[notes.x]\nb = 1\n", Config{})
	c.call(appproto.MethodConfigValueWrite, map[string]any{"keyPath": "notes", "value": map[string]any{"x": map[string]any{"c": true}}, "mergeStrategy": "upsert"})
	// As Codex writes it back: the merged table whole, so [notes] explicit.
	if got, want := readFile(t, path), "model = \"m\"\n\n[notes]\n\n[notes.x]\nb = 1\nc = true\n"; got != want {
		t.Fatalf("config.toml %q, want %q", got, want)
	}
}

func TestWriteAtomicReplacesThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.toml")
	if err := os.WriteFile(real, []byte("old\n"), 0o604); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(link, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if got := readFile(t, real); got != "new\n" {
		t.Fatalf("target %q", got)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o604 {
		t.Fatalf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("left behind: %v", entries)
	}
}
