package appserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/tomledit"
)

// configWriter serializes the writes of config/value/write and
// config/batchWrite, and remembers what they set for new threads.
type configWriter struct {
	mu sync.Mutex
	// written holds the thread defaults the writes changed, by config key
	// (see threadDefaultKeys): a new thread starts from them as Codex's
	// next thread starts from the rewritten config.toml.
	written map[string]string
}

// threadDefaultKeys are the config.toml keys whose writes change what a
// new thread starts with.
var threadDefaultKeys = []string{"model", "model_provider", "approval_policy", "sandbox_mode",
	"model_reasoning_effort", "model_reasoning_summary", "service_tier", "approvals_reviewer", "personality"}

func registerConfigWrite(s *Server) {
	register(s, appproto.ConfigValueWrite, func(ctx context.Context, c *call, p appproto.ConfigValueWriteParams) (appproto.ConfigWriteResponse, error) {
		return s.writeConfig(p.FilePath, p.ExpectedVersion, []appproto.ConfigEdit{p.ConfigEdit})
	})
	register(s, appproto.ConfigBatchWrite, func(ctx context.Context, c *call, p appproto.ConfigBatchWriteParams) (appproto.ConfigWriteResponse, error) {
		return s.writeConfig(p.FilePath, p.ExpectedVersion, p.Edits)
	})
}

// configWriteError is Codex's answer to a refused write: -32600 with the
// reason's code in error.data.
func configWriteError(code, msg string) *jsonrpc.Error {
	e := jsonrpc.NewError(jsonrpc.CodeInvalidRequest, msg)
	e.Data = mustJSON(map[string]string{"config_write_error_code": code})
	return e
}

// userConfigPath is the config.toml that writes go to.
func (s *Server) userConfigPath() string {
	cfg := s.core.Config()
	if cfg.CodexHome != "" {
		return filepath.Join(cfg.CodexHome, "config.toml")
	}
	return cfg.ConfigFile
}

// writeConfig applies edits to the user's config.toml, all or none, as
// Codex's config service does: each edit is checked, the result is
// validated as a whole, and the file is rewritten (atomically) only when
// a value changed.
func (s *Server) writeConfig(filePath, expected *string, edits []appproto.ConfigEdit) (appproto.ConfigWriteResponse, error) {
	var resp appproto.ConfigWriteResponse
	path := s.userConfigPath()
	if path == "" {
		return resp, internalError("failed to load configuration: no user config.toml")
	}
	if filePath != nil && !samePath(*filePath, path) {
		return resp, configWriteError(appproto.ConfigWriteLayerReadonly, "Only writes to the user config are allowed")
	}
	w := &s.cfgw
	w.mu.Lock()
	defer w.mu.Unlock()
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return resp, internalError("failed to load configuration: " + err.Error())
	}
	before, err := decodeTOML(src)
	if err != nil {
		return resp, internalError("failed to load configuration: " + err.Error())
	}
	doc, err := tomledit.Parse(src)
	if err != nil {
		return resp, internalError("failed to load configuration: " + err.Error())
	}
	if expected != nil && *expected != configVersion(before) {
		return resp, configWriteError(appproto.ConfigWriteVersionConflict, "Configuration was modified since last read. Fetch latest version and retry.")
	}
	// As in Codex, the values are edited as values (the version and the
	// checks are the values'), and the document gets the same edits.
	current, changed := deepCopyValue(before).(map[string]any), false
	for _, e := range edits {
		segs, msg := parseKeyPath(e.KeyPath)
		if msg != "" {
			return resp, configWriteError(appproto.ConfigWriteValidationError, msg)
		}
		v, err := tomledit.FromJSON(e.Value)
		if err != nil {
			return resp, configWriteError(appproto.ConfigWriteValidationError, "invalid value: "+err.Error())
		}
		if segs[0] == "profiles" {
			return resp, configWriteError(appproto.ConfigWriteValidationError,
				"`profiles` contains legacy config profile tables and can no longer be written; use `--profile <name>` with `<name>.config.toml` instead")
		}
		old, _ := valueAt(current, segs)
		old = deepCopyValue(old) // the merge edits tables in place
		if err := mergeValue(current, segs, plainValue(v), e.MergeStrategy == appproto.MergeUpsert); err != nil {
			return resp, configWriteError(appproto.ConfigWriteValidationError, err.Error())
		}
		now, _ := valueAt(current, segs)
		if reflect.DeepEqual(old, now) {
			continue // an edit that changes no value rewrites nothing
		}
		switch {
		case v == nil:
			_, err = doc.Delete(segs)
		case e.MergeStrategy == appproto.MergeUpsert:
			err = doc.Upsert(segs, v)
		default:
			err = doc.Set(segs, v)
		}
		switch {
		case errors.Is(err, tomledit.ErrNotTable):
			return resp, configWriteError(appproto.ConfigWriteValidationError, "cannot set value on non-table parent")
		case errors.Is(err, tomledit.ErrArrayOfTables):
			continue // Codex's editing leaves such a path as it is
		case err != nil:
			return resp, internalError("failed to build config edits: " + err.Error())
		}
		changed = true
	}
	if msg := configTypeError(current, doc.Bytes()); msg != "" {
		return resp, configWriteError(appproto.ConfigWriteValidationError, "Invalid configuration: "+msg)
	}
	if untrustedApproval(doc.Bytes()) {
		// Codex 0.169 refuses it so; codexd would not start with it either.
		return resp, configWriteError(appproto.ConfigWriteValidationError,
			`Invalid configuration: approval_policy = "untrusted" is no longer supported; remove this setting`)
	}
	if changed {
		if _, err := decodeTOML(doc.Bytes()); err != nil {
			return resp, internalError("failed to build config edits: " + err.Error())
		}
		if err := writeAtomic(path, doc.Bytes()); err != nil {
			return resp, internalError("failed to persist config.toml: " + err.Error())
		}
		w.remember(edits, current)
	}
	return appproto.ConfigWriteResponse{Status: "ok", Version: configVersion(current), FilePath: path}, nil
}

// remember records the thread defaults the edits touched, as the file now
// has them.
func (w *configWriter) remember(edits []appproto.ConfigEdit, cfg map[string]any) {
	if w.written == nil {
		w.written = map[string]string{}
	}
	for _, e := range edits {
		top, _, _ := strings.Cut(e.KeyPath, ".")
		for _, k := range threadDefaultKeys {
			if k != top {
				continue
			}
			if v, ok := cfg[k].(string); ok {
				w.written[k] = v
			} else {
				// Removed: new threads keep the settings the server
				// started with.
				delete(w.written, k)
			}
		}
	}
}

// writtenSettings applies what config writes changed to st.
func (s *Server) writtenSettings(st agent.Settings) agent.Settings {
	w := &s.cfgw
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, v := range w.written {
		switch k {
		case "model":
			st.Model = v
		case "model_provider":
			st.ModelProvider = v
		case "approval_policy":
			if s.requirementsAllow(v, "") {
				st.Approval = agent.ApprovalPolicy(v)
			}
		case "sandbox_mode":
			if s.requirementsAllow("", v) {
				st.Sandbox = agent.SandboxPolicy{Mode: agent.SandboxMode(v)}
				st.PermissionProfile = ""
			}
		case "model_reasoning_effort":
			st.ReasoningEffort = v
		case "model_reasoning_summary":
			st.ReasoningSummary = v
		case "service_tier":
			st.ServiceTier = v
		case "approvals_reviewer":
			st.ApprovalsReviewer = v
		case "personality":
			st.Personality = v
		}
	}
	return st
}

// writtenDefaults fills the settings a thread/start left unset with what
// config writes changed, so that a new thread starts from the rewritten
// config as in Codex.
func (s *Server) writtenDefaults(r *overrideReq) {
	w := &s.cfgw
	w.mu.Lock()
	written := make(map[string]string, len(w.written))
	for k, v := range w.written {
		written[k] = v
	}
	w.mu.Unlock()
	set := func(dst **string, k string) {
		if v, ok := written[k]; ok && *dst == nil {
			*dst = &v
		}
	}
	set(&r.model, "model")
	set(&r.provider, "model_provider")
	set(&r.reviewer, "approvals_reviewer")
	set(&r.personality, "personality")
	set(&r.serviceTier, "service_tier")
	set(&r.effort, "model_reasoning_effort")
	set(&r.summary, "model_reasoning_summary")
	if v, ok := written["approval_policy"]; ok && r.approval == nil && s.requirementsAllow(v, "") {
		a := appproto.Approval(v)
		r.approval = &a
	}
	if v, ok := written["sandbox_mode"]; ok && r.sandboxMode == nil && r.sandboxPolicy == nil && r.permissions == nil && s.requirementsAllow("", v) {
		r.sandboxMode = &v
	}
}

// requirementsAllow reports whether the managed requirements allow an
// approval policy or sandbox mode the config names; one they do not is
// left out, as Codex falls back from a config value its requirements
// refuse.
func (s *Server) requirementsAllow(approval, mode string) bool {
	req := s.cfg.Requirements
	if req == nil {
		return true
	}
	ok := func(list []string, v string) bool {
		if v == "" || len(list) == 0 {
			return true
		}
		for _, x := range list {
			if x == v {
				return true
			}
		}
		return false
	}
	return ok(req.AllowedApprovalPolicies, approval) && ok(req.AllowedSandboxModes, mode)
}

// parseKeyPath splits a dotted key path, with Codex's messages.
func parseKeyPath(p string) ([]string, string) {
	if strings.TrimSpace(p) == "" {
		return nil, "keyPath must not be empty"
	}
	segs := strings.Split(p, ".")
	for _, s := range segs {
		if s == "" {
			return nil, "keyPath segments must not be empty"
		}
	}
	return segs, ""
}

// samePath reports whether a client's filePath names the user config.
func samePath(given, want string) bool {
	if !filepath.IsAbs(given) {
		return false
	}
	if filepath.Clean(given) == filepath.Clean(want) {
		return true
	}
	a, errA := filepath.EvalSymlinks(given)
	b, errB := filepath.EvalSymlinks(want)
	return errA == nil && errB == nil && a == b
}

// untrustedApproval reports whether a config.toml sets the top-level
// approval_policy to "untrusted", which neither Codex 0.169 nor codexd
// starts with (one in an unselected profile is left alone, as by both).
func untrustedApproval(src []byte) bool {
	doc, err := decodeTOML(src)
	return err == nil && doc["approval_policy"] == "untrusted"
}

func decodeTOML(src []byte) (map[string]any, error) {
	out := map[string]any{}
	if _, err := toml.Decode(string(src), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// configVersion is Codex's version of a config layer: "sha256:" and the
// hex SHA-256 of the layer's values as compact JSON with sorted keys.
func configVersion(cfg map[string]any) string {
	sum := sha256.Sum256([]byte(canonicalJSON(cfg)))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeAtomic replaces path with data through a temporary file in the
// same directory, so a reader sees the old file or the new one, never a
// part. An existing file keeps its mode; a new one is private (0600, as
// Codex creates it).
func writeAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o600)
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved // write through a symlinked config.toml
	}
	if fi, err := os.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(target), ".config.toml.tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		return err
	}
	ok = true
	return nil
}
