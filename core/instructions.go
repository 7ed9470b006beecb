package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/tools"
	"github.com/codexd/codexd/execclient"
)

// instructionsOpts are a thread's own instructions.
type instructionsOpts struct {
	base      *string // replaces baseInstructions
	developer *string // appended
}

// baseInstructions tell the model who it is and how to use its tools.
const baseInstructions = `You are a coding agent running in codexd, a terminal-based coding assistant. You help the user with software engineering tasks in the repository at the working directory: you read code, run commands, edit files and explain what you did.

How you work:
- Use exec_command to run shell commands (prefer rg to search). A command that is still running when its wait ends keeps running: continue it with write_stdin and the session ID you were given.
- Edit files with apply_patch (a patch between "*** Begin Patch" and "*** End Patch"), never by echoing into files.
- For work of several steps, keep a short plan with update_plan and mark steps as you finish them.
- Commands run in a sandbox whose limits the environment context gives. When a command needs more, ask for escalation (sandbox_permissions "require_escalated" with a justification) if the approval policy allows it; otherwise explain what the user should run.
- Keep going until the request is fully handled, then answer briefly: what you changed, and what the user should check. Do not print whole files the user can open.
- Follow the AGENTS.md instructions of the repository: a file's instructions apply to the directory tree it sits in, and deeper files win.`

// projectDocMaxBytes bounds the AGENTS.md text included (Codex's
// project_doc_max_bytes default).
const projectDocMaxBytes = 32 * 1024

// projectDocSeparator joins $CODEX_HOME/AGENTS.md and the project's docs, as
// Codex does.
const projectDocSeparator = "\n\n--- project-doc ---\n\n"

// agentsInstructions returns the user's instructions: $CODEX_HOME/AGENTS.md
// (or AGENTS.override.md), then every AGENTS.md (or AGENTS.override.md)
// from the repository root (the nearest ancestor holding .git) down to cwd,
// or cwd's alone outside a repository, as Codex's project_doc does.
//
// The project's files are read where commands run (through the
// exec-server's filesystem), so a remote exec-server's repository is the one
// described; $CODEX_HOME is this machine's.
func agentsInstructions(ctx context.Context, fsys applypatch.FS, codexHome, cwd string, maxBytes int) string {
	var out strings.Builder
	if codexHome != "" {
		for _, name := range []string{"AGENTS.override.md", "AGENTS.md"} {
			if b, err := os.ReadFile(filepath.Join(codexHome, name)); err == nil && strings.TrimSpace(string(b)) != "" {
				out.WriteString(strings.TrimSpace(string(b)))
				break
			}
		}
	}
	if maxBytes == 0 {
		maxBytes = projectDocMaxBytes
	}
	var docs string
	if maxBytes > 0 {
		docs = projectDocs(ctx, fsys, cwd, maxBytes)
	}
	if docs != "" {
		if out.Len() > 0 {
			out.WriteString(projectDocSeparator)
		}
		out.WriteString(docs)
	}
	return out.String()
}

func projectDocs(ctx context.Context, fsys applypatch.FS, cwd string, maxBytes int) string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return ""
	}
	dir := filepath.Clean(cwd)
	chain := []string{dir}
	root := ""
	for cur := dir; ; {
		if _, err := fsys.Stat(ctx, filepath.Join(cur, ".git")); err == nil {
			root = cur
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		chain = append(chain, parent)
		cur = parent
	}
	var dirs []string
	if root == "" {
		dirs = []string{dir}
	} else {
		for i := len(chain) - 1; i >= 0; i-- {
			if len(dirs) == 0 && chain[i] != root {
				continue
			}
			dirs = append(dirs, chain[i])
		}
	}
	remaining := maxBytes
	var parts []string
	for _, d := range dirs {
		if remaining <= 0 {
			break
		}
		for _, name := range []string{"AGENTS.override.md", "AGENTS.md"} {
			b, err := fsys.ReadFile(ctx, filepath.Join(d, name))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				// A directory of that name, or an unreadable file: like
				// Codex, skip it.
				continue
			}
			if len(b) > remaining {
				b = b[:remaining]
			}
			if strings.TrimSpace(string(b)) != "" {
				parts = append(parts, string(b))
				remaining -= len(b)
			}
			break
		}
	}
	return strings.Join(parts, "\n\n")
}

// environmentContext describes where and how commands run.
func environmentContext(s agent.Settings, shell string) string {
	var b strings.Builder
	b.WriteString("<environment_context>\n")
	fmt.Fprintf(&b, "  <cwd>%s</cwd>\n", s.Cwd)
	fmt.Fprintf(&b, "  <approval_policy>%s</approval_policy>\n", s.Approval)
	fmt.Fprintf(&b, "  <sandbox_mode>%s</sandbox_mode>\n", s.Sandbox.Mode)
	if s.Sandbox.Mode == agent.SandboxWorkspaceWrite || s.Sandbox.Mode == agent.SandboxReadOnly {
		net := "restricted"
		if s.Sandbox.NetworkAccess {
			net = "enabled"
		}
		fmt.Fprintf(&b, "  <network_access>%s</network_access>\n", net)
	}
	if len(s.Sandbox.WritableRoots) > 0 {
		b.WriteString("  <writable_roots>\n")
		for _, r := range s.Sandbox.WritableRoots {
			fmt.Fprintf(&b, "    <root>%s</root>\n", r)
		}
		b.WriteString("  </writable_roots>\n")
	}
	fmt.Fprintf(&b, "  <shell>%s</shell>\n", filepath.Base(shell))
	b.WriteString("</environment_context>")
	return b.String()
}

// buildRequest assembles the model request: the instructions as developer
// messages (base instructions, then the AGENTS.md instructions), the
// environment context, then the thread's history.
func (tr *turn) buildRequest() *prompt.Request {
	t := tr.t
	s := tr.settings
	t.mu.Lock()
	base := t.base
	t.mu.Unlock()

	cfg := &t.core.cfg
	instr := baseInstructions
	if base.base != nil {
		instr = *base.base
	} else if cfg.BaseInstructions != "" {
		instr = cfg.BaseInstructions
	}
	dev := cfg.DeveloperInstructions
	if base.developer != nil {
		dev = *base.developer
	}
	if dev != "" {
		instr += "\n\n" + dev
	}
	// The instructions are read once a turn: every request of the turn
	// starts with the same prefix, which keeps the provider's prompt cache.
	if tr.prefix == nil {
		tr.prefix = []prompt.Item{prompt.Message("developer", instr)}
		// Dial once: an exec-server that cannot be reached costs one dial
		// here, not one per directory, and the project's docs are skipped.
		var fsys applypatch.FS = noFS{}
		if c, err := t.core.exec(tr.ctx); err == nil {
			fsys = execFS{dial: func(context.Context) (*execclient.Client, error) { return c, nil }}
		} else {
			t.log.Warn("reading AGENTS.md: no exec-server", "err", err)
		}
		if docs := agentsInstructions(tr.ctx, fsys, cfg.CodexHome, s.Cwd, cfg.ProjectDocMaxBytes); docs != "" {
			tr.prefix = append(tr.prefix, prompt.Message("developer",
				fmt.Sprintf("# AGENTS.md instructions for %s\n\n<INSTRUCTIONS>\n%s\n</INSTRUCTIONS>", s.Cwd, docs)))
		}
		tr.prefix = append(tr.prefix, prompt.Message("user", environmentContext(s, t.exec.shell())))
	}
	hist := t.historySnapshot()
	input := make([]prompt.Item, 0, len(tr.prefix)+len(hist))
	input = append(append(input, tr.prefix...), hist...)

	req := &prompt.Request{
		Model:             s.Model,
		Input:             input,
		Tools:             tools.Specs(t.core.toolOptions(t)),
		ToolChoice:        "auto",
		ParallelToolCalls: true,
		Store:             false,
		Stream:            true,
		Include:           []string{"reasoning.encrypted_content"},
		PromptCacheKey:    t.id,
		ServiceTier:       s.ServiceTier,
		ThreadID:          t.id,
		TurnID:            tr.id,
		Originator:        t.originator(),
	}
	summary := s.ReasoningSummary
	if summary == "" {
		summary = "auto"
	}
	if summary != "none" || s.ReasoningEffort != "" {
		req.Reasoning = &prompt.Reasoning{Effort: s.ReasoningEffort}
		if summary != "none" {
			req.Reasoning.Summary = summary
		}
	}
	if len(tr.outputSchema) > 0 {
		req.Text = &prompt.TextControls{Format: &prompt.TextFormat{
			Type: "json_schema", Name: "codex_output_schema", Strict: true, Schema: tr.outputSchema,
		}}
	}
	return req
}

// noFS has no files.
type noFS struct{}

func (noFS) ReadFile(context.Context, string) ([]byte, error) { return nil, fs.ErrNotExist }
func (noFS) WriteFile(context.Context, string, []byte) error  { return fs.ErrPermission }
func (noFS) Remove(context.Context, string) error             { return fs.ErrPermission }
func (noFS) MkdirAll(context.Context, string) error           { return fs.ErrPermission }
func (noFS) Stat(context.Context, string) (applypatch.FileInfo, error) {
	return applypatch.FileInfo{}, fs.ErrNotExist
}
