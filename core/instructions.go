package core

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/modelinfo"
)

// instructionsOpts are a thread's own instructions.
type instructionsOpts struct {
	base      *string // replaces baseInstructions
	developer *string // appended
}

// baseInstructions returns codexd's base instructions for a model family
// (modelinfo's instructions variant). Codex varies its own by family; these
// are codexd's words, with the same coverage: the tools and their use, the
// sandbox and escalation, AGENTS.md, planning, and the final answer.
func baseInstructions(variant string) string {
	switch variant {
	case modelinfo.InstructionsCodeMode:
		return instructionsIntro + instructionsCodeModeTools + instructionsShared
	case modelinfo.InstructionsFallback:
		return instructionsIntro + instructionsFallbackTools + instructionsShared
	}
	return instructionsIntro + instructionsGeneralTools + instructionsShared
}

const instructionsIntro = `You are a coding agent working in codexd, a terminal coding assistant. The user and you share one workspace, the repository at the working directory; you read code, run commands, edit files and explain what you did, and you keep at it until the user's request is handled, not merely discussed.

`

const instructionsGeneralTools = `# Tools

- exec_command runs a shell command and returns its output. Prefer rg and rg --files to search. A command still running when its wait ends keeps running: read more of its output, or type into it (tty true), with write_stdin and the session ID it returned.
- apply_patch edits files. Send the patch itself, not JSON: "*** Begin Patch", then per file "*** Add File: PATH" (lines starting with +), "*** Delete File: PATH", or "*** Update File: PATH" (optionally "*** Move to: NEW") with hunks that start with "@@" and hold context lines (" "), removals ("-") and additions ("+"), then "*** End Patch". Never edit files by echoing or piping into them.
- request_user_input asks the user short questions, in Plan mode only; in other modes ask in your answer.
- web_search looks things up on the web when the provider offers it.
Run independent reads (files, searches) in parallel when you can.
`

const instructionsCodeModeTools = `# Tools

Your tools are in the functions namespace; call them directly.
- functions.exec_command runs a shell command and returns its output. Prefer rg and rg --files to search. A command still running when its wait ends keeps running: continue it with functions.write_stdin and the session ID it returned.
- functions.apply_patch edits files with a freeform patch: "*** Begin Patch", then per file "*** Add File: PATH" (lines starting with +), "*** Delete File: PATH", or "*** Update File: PATH" (optionally "*** Move to: NEW") with "@@" hunks of context (" "), removed ("-") and added ("+") lines, then "*** End Patch". Never edit files by echoing into them.
- functions.request_user_input asks the user short questions, in Plan mode only.
Call one tool at a time and read its result before the next.
`

const instructionsFallbackTools = `# Tools

- exec_command runs a shell command and returns its output. Prefer rg and rg --files to search. A command still running when its wait ends keeps running: read more of its output, or type into it, with write_stdin and the session ID it returned.
- To edit files run the apply_patch command through exec_command, with the patch in a heredoc:
  apply_patch <<'EOF'
  *** Begin Patch
  *** Update File: path/to/file
  @@ context line
  -old line
  +new line
  *** End Patch
  EOF
  A patch holds "*** Add File: PATH" (lines starting with +), "*** Delete File: PATH" and "*** Update File: PATH" sections (optionally "*** Move to: NEW"); hunks start with "@@" and give context (" "), removed ("-") and added ("+") lines. Never edit files by echoing into them.
- request_user_input asks the user short questions, in Plan mode only.
- web_search looks things up on the web when the provider offers it.
`

const instructionsShared = `
# Sandbox and approvals

Commands run in a sandbox; the permissions instructions say what it allows, the approval policy, and the writable roots. When a command that matters fails because of the sandbox, or needs to write elsewhere or reach the network, ask to run it unsandboxed (sandbox_permissions "require_escalated" with a one-sentence justification) if the policy allows asking; otherwise find another way or tell the user what to run. Never try to get around the sandbox or an approval.

# AGENTS.md

Repositories may hold AGENTS.md files with instructions for you (conventions, commands to run, checks to pass). A file applies to the whole directory tree it sits in; a deeper file wins over a shallower one, and the user's and developer's instructions win over both. The ones that apply to the working directory are given to you; read the others before you change files under them.

# Working

- Read before you change: find how the code does things and follow it. Fix problems at their root, keep changes small and focused, and do not fix unrelated things (mention them instead).
- Never revert changes you did not make, and never run destructive commands (git reset --hard, rm -rf...) unless the user asked for them.
- For work of several steps, decide the steps first and tell the user briefly what you are about to do before long tool runs; skip that for simple requests.
- Check your work: run the tests, build or linter the repository uses, starting with the narrowest that covers what you changed.

# Answering

Be concise and direct, like a teammate's status report. Say what you changed and where (file paths with line numbers), what you verified and how, and what the user should check or do next. Use short paragraphs or flat bullet lists; put commands, paths and identifiers in backticks; do not paste whole files the user can open, and do not tell the user to save or copy files you already wrote.`

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
func agentsInstructions(ctx context.Context, fsys applypatch.FS, codexHome, cwd string, maxBytes int, names docNames) string {
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
		docs = projectDocs(ctx, fsys, cwd, maxBytes, names)
	}
	if docs != "" {
		if out.Len() > 0 {
			out.WriteString(projectDocSeparator)
		}
		out.WriteString(docs)
	}
	return out.String()
}

// docNames are project_doc_fallback_filenames (read, in order, where a
// directory has neither AGENTS.override.md nor AGENTS.md) and
// project_root_markers (what makes a directory the project's root; nil
// means .git, empty means none: cwd alone), as Codex reads them.
type docNames struct {
	Fallbacks   []string
	RootMarkers []string
}

func projectDocs(ctx context.Context, fsys applypatch.FS, cwd string, maxBytes int, names docNames) string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return ""
	}
	dir := filepath.Clean(cwd)
	chain := []string{dir}
	root := ""
	markers := names.RootMarkers
	if markers == nil {
		markers = []string{".git"}
	}
	for cur := dir; len(markers) > 0; {
		found := false
		for _, m := range markers {
			if _, err := fsys.Stat(ctx, filepath.Join(cur, m)); err == nil {
				found = true
				break
			}
		}
		if found {
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
		for _, name := range append([]string{"AGENTS.override.md", "AGENTS.md"}, names.Fallbacks...) {
			if name == "" || strings.ContainsRune(name, filepath.Separator) {
				continue
			}
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

// noFS has no files.
type noFS struct{}

func (noFS) ReadFile(context.Context, string) ([]byte, error) { return nil, fs.ErrNotExist }
func (noFS) WriteFile(context.Context, string, []byte) error  { return fs.ErrPermission }
func (noFS) Remove(context.Context, string) error             { return fs.ErrPermission }
func (noFS) MkdirAll(context.Context, string) error           { return fs.ErrPermission }
func (noFS) Stat(context.Context, string) (applypatch.FileInfo, error) {
	return applypatch.FileInfo{}, fs.ErrNotExist
}
