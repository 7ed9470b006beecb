package appserver

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// requestConfig is the `config` member of thread/start, thread/resume and
// thread/fork: Codex's config keys (dotted as with `-c`, or nested), which
// Codex 0.169 lays over config.toml as its `-c` overrides are, below the
// request's own members (a `model` member beats `config.model`).
type requestConfig struct {
	doc  map[string]any  // the keys as a TOML tree, values as BurntSushi/toml decodes them
	keys map[string]bool // the members as given
}

// parseRequestConfig reads a request's `config` member; nil (or null) is
// no config. Anything but a JSON object is refused as Codex's params
// decoder refuses it.
func parseRequestConfig(raw jsontextValue) (*requestConfig, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	if raw.Kind() != '{' {
		return nil, invalidRequest("Invalid request: invalid type: " + jsonKind(raw) + ", expected a map")
	}
	d := stdjson.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, invalidRequest("Invalid request: " + err.Error())
	}
	rc := &requestConfig{doc: map[string]any{}, keys: make(map[string]bool, len(m))}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a dotted key after the table it lands in
	for _, k := range keys {
		rc.keys[k] = true
		setPath(rc.doc, strings.Split(k, "."), tomlOfJSON(m[k]))
	}
	return rc, nil
}

// tomlOfJSON is the TOML value Codex makes of a JSON one: integers and
// floats apart, null as the empty string.
func tomlOfJSON(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case stdjson.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = tomlOfJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tomlOfJSON(e)
		}
		return out
	}
	return v
}

// setPath sets v at path in root, making tables on the way (a value in
// the way becomes a table, as an override replaces it); a table set onto
// a table merges into it.
func setPath(root map[string]any, path []string, v any) {
	cur := root
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	last := path[len(path)-1]
	if vm, ok := v.(map[string]any); ok {
		if existing, ok := cur[last].(map[string]any); ok {
			mergeTables(existing, vm)
			return
		}
	}
	cur[last] = v
}

// has reports whether the config names key (a top-level key, given
// dotted or nested).
func (rc *requestConfig) has(key string) bool {
	if rc == nil {
		return false
	}
	_, ok := rc.doc[key]
	return ok
}

// str is the config's string value of a top-level key.
func (rc *requestConfig) str(key string) *string {
	if rc == nil {
		return nil
	}
	if s, ok := rc.doc[key].(string); ok {
		return &s
	}
	return nil
}

// noTools reports whether the config turns the shell tool off
// (features.shell_tool = false, as the TUI's title job and other helper
// threads send): such a thread's model is offered no tools at all. codexd
// cannot take the shell away alone, and offering less than asked is the
// safe side.
func (rc *requestConfig) noTools() bool {
	if rc == nil {
		return false
	}
	f, _ := rc.doc["features"].(map[string]any)
	v, ok := f["shell_tool"].(bool)
	return ok && !v
}

// configUse says which request a config comes with: Codex 0.169 treats
// some keys apart on each.
type configUse int

const (
	configStart configUse = iota
	configResume
	configFork
)

// checkRequestConfig holds the config to the types Codex gives its keys,
// with the errors Codex's configuration load answers (the message of its
// first bad value). Codex 0.169 refuses approval_policy = "untrusted"
// from the config of a thread/start or thread/fork (not of a resume).
func checkRequestConfig(rc *requestConfig, use configUse) error {
	if rc == nil {
		return nil
	}
	if f, ok := rc.doc["features"]; ok {
		if _, isMap := f.(map[string]any); !isMap {
			// serde's name for Codex's [features] type when it loads them.
			return invalidRequest("failed to load configuration: invalid type: " + serdeKindOf(f) + ", expected struct FeaturesToml\nin `features`\n")
		}
	}
	if msg := configTypeError(rc.doc, nil); msg != "" {
		return invalidRequest("failed to load configuration: " + msg)
	}
	if p := rc.str("profile"); p != nil {
		return invalidRequest(fmt.Sprintf("failed to load configuration: legacy `profile = %q` config is no longer supported; use `--profile %s` with `%s.config.toml` instead", *p, *p, *p))
	}
	if m := rc.str("model"); m != nil && *m == "" {
		return invalidRequest("No models are available. Set `model` explicitly or check your model catalog configuration.")
	}
	if a := rc.str("approval_policy"); a != nil && *a == appproto.ApprovalUntrusted && use != configResume {
		return invalidRequest(`failed to load configuration: approval_policy = "untrusted" is no longer supported; remove this setting`)
	}
	return nil
}

// checkProvider refuses a provider that is not configured, as Codex's
// configuration load does (a thread/resume, resume, answers as Codex's
// resume does, with the provider in the error's data).
func (s *Server) checkProvider(p *string, resume bool) error {
	if p == nil || slices.Contains(s.core.Config().Providers, *p) {
		return nil
	}
	if !resume {
		return invalidRequest(fmt.Sprintf("failed to load configuration: Model provider `%s` not found", *p))
	}
	e := invalidRequest(fmt.Sprintf("This chat uses model provider \u201c%s\u201d, which is no longer configured. Restore this provider\u2019s configuration to continue.", *p))
	e.Data = mustJSON(struct {
		ModelProvider string `json:"modelProvider"`
		Type          string `json:"type"`
	}{*p, "modelProviderNotConfigured"})
	return e
}

// configErrorFor is the answer to a resume or fork of thread id whose
// config was refused with err: Codex reads the thread before it loads the
// configuration, so a thread that does not exist is answered as such.
func (s *Server) configErrorFor(ctx context.Context, id string, err error) error {
	if _, _, rerr := s.core.ReadThread(ctx, id, false); errors.Is(rerr, agent.ErrThreadNotFound) {
		return invalidRequest("no rollout found for thread id " + id)
	}
	return err
}

// applyRequestConfig fills the settings r leaves unset with the config's,
// for the keys codexd acts on. It comes after the request's own members
// and before config writes and config.toml.
func applyRequestConfig(r *overrideReq, rc *requestConfig, use configUse) {
	if rc == nil {
		return
	}
	set := func(dst **string, key string) {
		if *dst == nil {
			*dst = rc.str(key)
		}
	}
	set(&r.model, "model")
	set(&r.provider, "model_provider")
	set(&r.effort, "model_reasoning_effort")
	set(&r.summary, "model_reasoning_summary")
	set(&r.reviewer, "approvals_reviewer")
	set(&r.personality, "personality")
	set(&r.serviceTier, "service_tier")
	// A fork keeps its source's approval policy over the config's (Codex
	// 0.169 answered so), though not over the request's approvalPolicy.
	if r.approval == nil && use != configFork {
		if v := rc.str("approval_policy"); v != nil {
			a := appproto.Approval(*v)
			r.approval = &a
		} else if t, ok := rc.doc["approval_policy"].(map[string]any); ok {
			if g, ok := t["granular"].(map[string]any); ok {
				r.approval = &appproto.AskForApproval{Granular: mustJSON(g)}
			}
		}
	}
	if v := rc.str("sandbox_mode"); v != nil && r.sandboxMode == nil && r.sandboxPolicy == nil && r.permissions == nil {
		r.sandboxMode = v
	}
}

// applyWorkspaceTable lays the config's [sandbox_workspace_write] over the
// configuration's, for a thread whose sandbox mode (the request's, else
// the configuration's) is workspace-write; it comes after the config and
// config writes are applied.
func (s *Server) applyWorkspaceTable(r *overrideReq, rc *requestConfig) {
	if rc == nil || r.permissions != nil || r.sandboxPolicy != nil {
		return
	}
	t, ok := rc.doc["sandbox_workspace_write"].(map[string]any)
	if !ok {
		return
	}
	d := s.core.Config().Sandbox
	mode := string(d.Mode)
	if r.sandboxMode != nil {
		mode = *r.sandboxMode
	}
	if mode != string(agent.SandboxWorkspaceWrite) {
		return
	}
	p := appproto.SandboxPolicy{Type: appproto.SandboxWorkspaceWrite, WritableRoots: slices.Clone(d.WritableRoots),
		NetworkAccess: d.NetworkAccess, ExcludeTmpdirEnvVar: d.ExcludeTmpdirEnvVar, ExcludeSlashTmp: d.ExcludeSlashTmp}
	flag := func(dst *bool, key string) {
		if v, ok := t[key].(bool); ok {
			*dst = v
		}
	}
	flag(&p.NetworkAccess, "network_access")
	flag(&p.ExcludeTmpdirEnvVar, "exclude_tmpdir_env_var")
	flag(&p.ExcludeSlashTmp, "exclude_slash_tmp")
	if roots, ok := t["writable_roots"].([]any); ok {
		p.WritableRoots = []string{}
		for _, v := range roots {
			if s, ok := v.(string); ok {
				p.WritableRoots = append(p.WritableRoots, s)
			}
		}
	}
	r.sandboxPolicy, r.sandboxMode = &p, nil
}

// namesModel reports whether a thread/resume's config counts, for Codex
// 0.169, as naming the thread's model: it sets the model, the provider or
// the reasoning effort. Such a resume takes all three from the
// configuration instead of restoring the recorded ones.
func (rc *requestConfig) namesModel() bool {
	return rc.has("model") || rc.has("model_provider") || rc.has("model_reasoning_effort")
}

// cacheOnlyLocked reports whether a loaded thread is, for Codex 0.169, only
// a cache entry: nobody is subscribed to it and it is idle, with no turn
// running and no server request pending.
func (t *thread) cacheOnlyLocked() bool {
	return len(t.st.subscribers) == 0 && t.st.active == nil && len(t.st.requests) == 0 &&
		t.st.status.Type == appproto.StatusIdle
}

// resumeDiffers reports whether a thread/resume asks for anything a loaded
// thread with settings st does not have, as Codex 0.169 compares them: a
// member that differs, or any config, base or developer instructions or
// permissions at all.
func resumeDiffers(p appproto.ThreadResumeParams, st agent.Settings) bool {
	differs := func(req *string, active string) bool { return req != nil && *req != active }
	switch {
	case p.Config != nil && string(p.Config) != "null", p.BaseInstructions != nil, p.DeveloperInstructions != nil,
		p.Permissions != nil:
		return true
	case differs(p.Model, st.Model), differs(p.ModelProvider, st.ModelProvider), differs(p.ServiceTier, st.ServiceTier),
		differs(p.Cwd, st.Cwd), differs(p.ApprovalsReviewer, st.ApprovalsReviewer), differs(p.Personality, st.Personality):
		return true
	case p.RuntimeWorkspaceRoots != nil && !slices.Equal(p.RuntimeWorkspaceRoots, runtimeRoots(st)):
		return true
	case p.ApprovalPolicy != nil && (p.ApprovalPolicy.IsGranular() || st.Approval == agent.ApprovalGranular ||
		p.ApprovalPolicy.Policy != string(st.Approval)):
		return true
	}
	if p.Sandbox != nil {
		switch mode := st.Sandbox.Mode; *p.Sandbox {
		case appproto.SandboxModeReadOnly:
			return mode != agent.SandboxReadOnly
		case appproto.SandboxModeWorkspaceWrite:
			return mode != agent.SandboxWorkspaceWrite
		case appproto.SandboxModeDangerFullAccess:
			return mode != agent.SandboxDangerFullAccess && mode != agent.SandboxExternal
		}
		return true
	}
	return false
}
