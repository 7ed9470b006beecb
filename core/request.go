package core

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/tools"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/modelinfo"
	"github.com/codexd/codexd/skills"
)

// modelInfo is the metadata of model: the configured catalog's entry (or
// Codex 0.169's built-in one's, or the fallback's) with the config's
// overrides.
func (c *Core) modelInfo(model string) modelinfo.Info {
	cat := c.cfg.Catalog
	if cat == nil {
		cat = modelinfo.Builtin()
	}
	return cat.Lookup(model).With(c.cfg.ModelOverrides)
}

// toolOptions are the tools t's turns offer a model with metadata info.
func (c *Core) toolOptions(t *thread, info *modelinfo.Info, sandbox agent.SandboxMode) tools.Options {
	o := tools.Options{
		ApplyPatch: info.ApplyPatchToolType,
		NoShell:    info.ShellType == modelinfo.ShellDisabled,
		CodeMode:   info.CodeMode(),
		NoTools:    t.noTools,
		ViewImage:  slices.Contains(info.InputModalities, "image"),
	}
	if !c.cfg.ApplyPatchTool {
		o.ApplyPatch = ""
	}
	mode := c.cfg.WebSearch
	if mode == "" && sandbox == agent.SandboxDangerFullAccess {
		mode = "live" // Codex's default without a sandbox
	}
	switch mode {
	case "disabled":
	case "live":
		o.WebSearch, o.WebSearchLive = info.WebSearchToolType, true
	default:
		o.WebSearch = info.WebSearchToolType
	}
	return o
}

// recordContext records the turn's context blocks in the history before
// its input: all of them on a thread's first turn, then those that
// changed (package doc of context.go).
func (tr *turn) recordContext() {
	t := tr.t
	hist := t.historySnapshot()
	t.mu.Lock()
	last := t.lastModel
	t.lastModel = tr.settings.Model
	if t.baseModel == "" && !scanContext(hist).seen {
		t.baseModel = tr.settings.Model // a new thread: its base instructions stay
	}
	t.mu.Unlock()
	items := append(tr.modelSwitchItem(last), contextItems(hist, tr.contextBlocks())...)
	t.appendHistory(tr.id, items...)
	if len(items) > 0 || last != tr.settings.Model {
		// The rollout keeps the settings the context describes, so that a
		// resumed thread goes on with them (as Codex's turn context) and
		// sends no update for a change it already sent; and the model of
		// its last turn, which a resume compares against.
		t.rec.Event(agent.Event{TurnID: tr.id, Time: time.Now(), Msg: agent.SettingsUpdated{Settings: tr.settings}})
	}
}

// initialContext is the whole context, as a first turn records it; a
// compacted history starts with it, as Codex's does.
func (tr *turn) initialContext() []prompt.Item { return contextItems(nil, tr.contextBlocks()) }

// contextBlocks renders the turn's context.
func (tr *turn) contextBlocks() contextBlocks {
	t := tr.t
	s := tr.settings
	cfg := &t.core.cfg
	info := t.core.modelInfo(s.Model)
	t.mu.Lock()
	base := t.base
	t.mu.Unlock()
	cur := contextBlocks{
		skills:      skills.Instructions(tr.turnSkills()),
		collab:      collabText(s.CollaborationMode),
		permissions: permissionsText(s, info.CodeMode()),
		developer:   cfg.DeveloperInstructions,
		agentsDir:   s.Cwd,
		envHead:     envHead(s, t.exec.shell()),
		envRest:     envRest(s, time.Now()),
	}
	if base.developer != nil {
		cur.developer = *base.developer
	}
	// Dial once: an exec-server that cannot be reached costs one dial here,
	// not one per directory, and the project's docs are skipped.
	var fsys applypatch.FS = noFS{}
	if c, err := t.core.exec(tr.ctx); err == nil {
		fsys = execFS{dial: func(context.Context) (*execclient.Client, error) { return c, nil }}
	} else {
		t.log.Warn("reading AGENTS.md: no exec-server", "err", err)
	}
	if docs := agentsInstructions(tr.ctx, fsys, cfg.CodexHome, s.Cwd, cfg.ProjectDocMaxBytes,
		docNames{Fallbacks: cfg.ProjectDocFallbackFilenames, RootMarkers: cfg.ProjectRootMarkers}); docs != "" {
		cur.agentsDocs = docs
	}
	return cur
}

// buildRequest assembles a model request as Codex 0.169 does for the
// turn's model: the code-mode tools item and the base instructions first,
// then the history (context blocks included), with the request members
// and headers of the model's metadata.
func (tr *turn) buildRequest() *prompt.Request {
	t := tr.t
	s := tr.settings
	cfg := &t.core.cfg
	info := t.core.modelInfo(s.Model)
	t.mu.Lock()
	base, baseModel := t.base, t.baseModel
	t.mu.Unlock()

	// The base instructions are those of the model the thread started on
	// (a later model's come in a <model_switch> message, modelswitch.go).
	instr := baseInstructions(info.Instructions())
	if baseModel != "" && baseModel != s.Model {
		first := t.core.modelInfo(baseModel)
		instr = baseInstructions(first.Instructions())
	}
	if base.base != nil {
		instr = *base.base
	} else if cfg.BaseInstructions != "" {
		instr = cfg.BaseInstructions
	}
	opts := t.core.toolOptions(t, &info, s.Sandbox.Mode)
	hist := t.historySnapshot()
	input := make([]prompt.Item, 0, len(hist)+2)
	if extra := tools.AdditionalTools(opts); extra != nil {
		input = append(input, prompt.Item{Type: prompt.TypeAdditionalTools, ID: "at_" + t.id, Role: "developer", Tools: extra})
	}
	baseMsg := prompt.Message("developer", instr)
	baseMsg.ID = "msg_" + uuid.NewSHA1(uuid.NameSpaceOID, []byte(instr)).String()
	input = append(append(input, baseMsg), hist...)
	tr.prefix = append([]prompt.Item{baseMsg}, input[:len(input)-len(hist)-1]...)
	for _, it := range hist {
		if isContextMessage(it) {
			tr.prefix = append(tr.prefix, it)
		}
	}

	switch {
	case info.UseResponsesLite:
		input = withoutImageDetail(input)
	case !info.SupportsImageDetailOriginal:
		input = withoutOriginalDetail(input)
	}
	req := &prompt.Request{
		Model:             s.Model,
		Input:             input,
		Tools:             tr.withMCPTools(tools.Specs(opts), opts),
		OmitTools:         opts.CodeMode && !opts.NoTools,
		ToolChoice:        "auto",
		ParallelToolCalls: info.ParallelToolCalls(),
		Store:             false,
		Stream:            true,
		Include:           []string{"reasoning.encrypted_content"},
		PromptCacheKey:    t.id,
		ServiceTier:       wireServiceTier(s.ServiceTier),
		ThreadID:          t.id,
		TurnID:            tr.id,
		Originator:        t.originator(),
	}
	effort := s.ReasoningEffort
	if effort == "" {
		effort = info.DefaultReasoningLevel
	}
	summary := s.ReasoningSummary
	if summary == "" {
		summary = info.DefaultReasoningSummary
	}
	if summary == "none" {
		summary = ""
	}
	if effort != "" || summary != "" {
		req.Reasoning = &prompt.Reasoning{Effort: effort, Summary: summary}
		if info.UseResponsesLite {
			req.Reasoning.Context = "all_turns"
		}
	}
	var text prompt.TextControls
	if info.SupportVerbosity {
		text.Verbosity = info.DefaultVerbosity
		if cfg.Verbosity != "" {
			text.Verbosity = cfg.Verbosity
		}
	}
	if len(tr.outputSchema) > 0 {
		text.Format = &prompt.TextFormat{Type: "json_schema", Name: "codex_output_schema", Strict: true, Schema: tr.outputSchema}
	}
	if text.Verbosity != "" || text.Format != nil {
		req.Text = &text
	}
	tr.requestMetadata(req, effort)
	if info.UseResponsesLite {
		req.Headers["x-openai-internal-codex-responses-lite"] = "true"
	}
	return req
}

// requestMetadata sets the ids Codex sends with each request, in
// client_metadata and in headers: the session (thread), the turn, the
// context window and the installation, and the turn metadata JSON.
func (tr *turn) requestMetadata(req *prompt.Request, effort string) {
	t := tr.t
	window := t.id + ":0"
	meta := turnMetadata{
		InstallationID: installationID(t.core.cfg.CodexHome), SessionID: t.id, ThreadID: t.id,
		AgentName: "/root", TurnID: tr.id, WindowID: window, WindowNumber: 0,
		ContextWindowID: uuid.NewSHA1(uuid.NameSpaceURL, []byte(window)).String(),
		RequestKind:     "turn", RootTurnID: tr.id, SandboxMode: string(tr.settings.Sandbox.Mode),
		TurnStartedAtMs: tr.started.UnixMilli(), Model: tr.settings.Model, ReasoningEffort: effort,
	}
	t.mu.Lock()
	meta.ThreadSource = t.info.ThreadSource
	t.mu.Unlock()
	b, err := json.Marshal(meta)
	if err != nil {
		panic(err) // strings and numbers only
	}
	req.ClientMetadata = map[string]string{
		"session_id": t.id, "thread_id": t.id, "turn_id": tr.id, "root_turn_id": tr.id,
		"x-codex-installation-id": meta.InstallationID, "x-codex-window-id": window,
		"x-codex-turn-metadata": string(b),
	}
	req.Headers = map[string]string{
		"x-codex-turn-metadata": string(b),
		"x-codex-window-id":     window,
		"x-client-request-id":   t.id,
	}
}

// turnMetadata is the x-codex-turn-metadata JSON, with the members of
// Codex's that codexd can state truly.
type turnMetadata struct {
	InstallationID  string `json:"installation_id"`
	SessionID       string `json:"session_id"`
	ThreadID        string `json:"thread_id"`
	AgentName       string `json:"agent_name"`
	TurnID          string `json:"turn_id"`
	WindowID        string `json:"window_id"`
	WindowNumber    int    `json:"window_number"`
	ContextWindowID string `json:"context_window_id"`
	RequestKind     string `json:"request_kind"`
	RootTurnID      string `json:"root_turn_id"`
	ThreadSource    string `json:"thread_source,omitempty"`
	SandboxMode     string `json:"sandbox_mode"`
	TurnStartedAtMs int64  `json:"turn_started_at_unix_ms"`
	AnalyticsOn     bool   `json:"analytics_enabled"`
	Model           string `json:"model"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
}

var installationIDs sync.Map // codex home -> id

// installationID is $CODEX_HOME/installation_id, which Codex writes once;
// codexd reads it and never writes it, so without one the id lasts as long
// as the process.
func installationID(home string) string {
	if v, ok := installationIDs.Load(home); ok {
		return v.(string)
	}
	id := ""
	if home != "" {
		if b, err := os.ReadFile(filepath.Join(home, "installation_id")); err == nil {
			if u, err := uuid.Parse(strings.TrimSpace(string(b))); err == nil {
				id = u.String()
			}
		}
	}
	if id == "" {
		id = uuid.NewString()
	}
	v, _ := installationIDs.LoadOrStore(home, id)
	return v.(string)
}

// wireServiceTier is the service_tier a request sends for a thread's tier:
// none for "default", as Codex 0.169 sends none (a thread/revert records
// an unset tier as "default").
func wireServiceTier(tier string) string {
	if tier == "default" {
		return ""
	}
	return tier
}
