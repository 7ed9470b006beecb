package core

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/skills"
)

// The context blocks a thread's history carries, in the tags and order
// Codex 0.169 uses. The first turn records them all: a developer message
// with the permissions instructions (and the configured developer
// instructions), then a user message with the AGENTS.md instructions and
// the environment context. A later turn whose settings or cwd changed
// records only the blocks that changed, each in a message of its own:
// AGENTS.md (user), permissions (developer), environment (user). The
// blocks live in the history, so a resumed or forked thread keeps them and
// a resumed one with the same settings sends nothing new.
const (
	permissionsOpen  = "<permissions instructions>"
	permissionsClose = "</permissions instructions>"
	envOpen          = "<environment_context>"
	agentsHeading    = "# AGENTS.md instructions for "
	// agentsReplaced opens the AGENTS.md block sent when the directory (or
	// its files) changed.
	agentsReplaced = "These AGENTS.md instructions replace all previously provided AGENTS.md instructions."
)

// contextBlocks are a turn's context, rendered.
type contextBlocks struct {
	skills      string // the skills list; "" when there are none
	collab      string // the collaboration mode's instructions
	permissions string
	developer   string // developer_instructions, if any
	agentsDir   string
	agentsDocs  string // "" when there are none
	// envHead and envRest are the environment context's two parts (see
	// envHead): a later block leaves the head out when it is unchanged.
	envHead, envRest string
}

// lastContext is what a history last told the model.
type lastContext struct {
	seen        bool // any environment context at all
	collab      string
	permissions string
	agentsDir   string
	agentsDocs  string
	// envHead and envRest are the environment context as the model has
	// it: the head of the last block that had one, the rest of the last.
	envHead, envRest string
}

// scanContext finds the latest context blocks in a history.
func scanContext(hist []prompt.Item) lastContext {
	var lc lastContext
	for _, it := range hist {
		if it.Type != prompt.TypeMessage || (it.Role != "user" && it.Role != "developer") {
			continue
		}
		for _, c := range it.Content {
			switch {
			case strings.HasPrefix(c.Text, permissionsOpen):
				lc.permissions = c.Text
			case strings.HasPrefix(c.Text, collabOpen):
				lc.collab = c.Text
			case strings.HasPrefix(c.Text, envOpen):
				lc.seen = true
				head, rest := splitEnv(c.Text)
				if head != "" {
					lc.envHead = head
				}
				lc.envRest = rest
			case strings.HasPrefix(c.Text, agentsHeading):
				lc.agentsDir, lc.agentsDocs = parseAgentsBlock(c.Text)
			}
		}
	}
	return lc
}

// contextItems returns the items to record before a turn's input: the
// whole context for a history that has none, else the blocks that changed.
func contextItems(hist []prompt.Item, cur contextBlocks) []prompt.Item {
	last := scanContext(hist)
	if !last.seen {
		dev := prompt.Item{Type: prompt.TypeMessage, Role: "developer", ID: newMessageID()}
		if cur.skills != "" {
			dev.Content = append(dev.Content, prompt.Content{Type: "input_text", Text: cur.skills})
		}
		dev.Content = append(dev.Content, prompt.Content{Type: "input_text", Text: cur.permissions})
		if cur.developer != "" {
			dev.Content = append(dev.Content, prompt.Content{Type: "input_text", Text: cur.developer})
		}
		// Default mode is what a thread starts in: only another mode is
		// told at the start, as in Codex.
		if cur.collab != "" && cur.collab != collabDefault {
			dev.Content = append(dev.Content, prompt.Content{Type: "input_text", Text: cur.collab})
		}
		user := prompt.Item{Type: prompt.TypeMessage, Role: "user", ID: newMessageID()}
		if cur.agentsDocs != "" {
			user.Content = append(user.Content, prompt.Content{Type: "input_text", Text: agentsBlock(cur.agentsDir, cur.agentsDocs, false)})
		}
		user.Content = append(user.Content, prompt.Content{Type: "input_text", Text: envBlock(cur.envHead, cur.envRest)})
		return []prompt.Item{dev, user}
	}
	var out []prompt.Item
	if cur.agentsDocs != "" && (cur.agentsDir != last.agentsDir || cur.agentsDocs != last.agentsDocs) {
		out = append(out, textMessage("user", agentsBlock(cur.agentsDir, cur.agentsDocs, last.agentsDocs != "")))
	}
	if cur.permissions != last.permissions {
		out = append(out, textMessage("developer", cur.permissions))
	}
	if cur.envHead != last.envHead || cur.envRest != last.envRest {
		// As Codex: the cwd and shell only when the cwd changed.
		head := cur.envHead
		if head == last.envHead {
			head = ""
		}
		out = append(out, textMessage("user", envBlock(head, cur.envRest)))
	}
	lastCollab := last.collab
	if lastCollab == "" {
		lastCollab = collabDefault
	}
	if cur.collab != "" && cur.collab != lastCollab {
		out = append(out, textMessage("developer", cur.collab))
	}
	return out
}

// isContextMessage reports whether an item is a message of context blocks.
func isContextMessage(it prompt.Item) bool {
	if it.Type != prompt.TypeMessage || len(it.Content) == 0 || (it.Role != "user" && it.Role != "developer") {
		return false
	}
	t := it.Content[0].Text
	return strings.HasPrefix(t, permissionsOpen) || strings.HasPrefix(t, envOpen) || strings.HasPrefix(t, agentsHeading) ||
		strings.HasPrefix(t, skills.InstructionsOpen) || strings.HasPrefix(t, collabOpen)
}

func newMessageID() string { return "msg_" + newUUIDv7() }

func textMessage(role, text string) prompt.Item {
	it := prompt.Message(role, text)
	it.ID = newMessageID()
	return it
}

// agentsBlock renders the AGENTS.md instructions of dir; replacing says
// they replace earlier ones.
func agentsBlock(dir, docs string, replacing bool) string {
	if replacing {
		docs = agentsReplaced + "\n\n" + docs
	}
	return fmt.Sprintf("%s%s\n\n<INSTRUCTIONS>\n%s\n</INSTRUCTIONS>", agentsHeading, dir, docs)
}

func parseAgentsBlock(text string) (dir, docs string) {
	head, body, _ := strings.Cut(strings.TrimPrefix(text, agentsHeading), "\n\n<INSTRUCTIONS>\n")
	body = strings.TrimSuffix(body, "\n</INSTRUCTIONS>")
	body = strings.TrimPrefix(body, agentsReplaced+"\n\n")
	return head, body
}

// permissionsText is the sandbox and approval policy in the model's
// words: what the sandbox allows, whether and how to ask for escalation,
// and the writable roots. The code-mode family gets the escalation part
// and the roots only, as in Codex.
func permissionsText(s agent.Settings, codeMode bool) string {
	var b strings.Builder
	b.WriteString(permissionsOpen + "\n")
	if !codeMode {
		b.WriteString(sandboxText(s.Sandbox) + "\n")
	}
	switch s.Approval {
	case agent.ApprovalNever:
		if !codeMode {
			b.WriteString("Approval policy: never. No command is ever put to the user, so never set `sandbox_permissions`: a command that asks for escalation is refused.\n")
		}
	case agent.ApprovalUntrusted:
		b.WriteString("Approval policy: untrusted (`unless-trusted`). Apart from a short allowlist of safe commands that only read, every command is put to the user for approval before it runs.\n")
	case agent.ApprovalOnFailure:
		b.WriteString("Approval policy: on-failure. Commands run in the sandbox (when there is one); a command that fails there is put to the user, who may let it run again without the sandbox.\n")
	case agent.ApprovalGranular:
		b.WriteString(granularText(granularFlags(s)))
	default:
		b.WriteString(escalationText)
	}
	if s.Sandbox.Mode == agent.SandboxWorkspaceWrite {
		if roots := writableRoots(s); len(roots) > 0 {
			quoted := make([]string, len(roots))
			for i, r := range roots {
				quoted[i] = "`" + r + "`"
			}
			fmt.Fprintf(&b, " The writable roots are %s.\n", strings.Join(quoted, ", "))
		}
	}
	b.WriteString(permissionsClose)
	return b.String()
}

func sandboxText(p agent.SandboxPolicy) string {
	net := "restricted"
	if p.NetworkAccess {
		net = "enabled"
	}
	switch p.Mode {
	case agent.SandboxDangerFullAccess:
		return "The sandbox decides which files commands may read and write. `sandbox_mode` is `danger-full-access`: there is no sandbox, every command may do anything. Network access is enabled."
	case agent.SandboxWorkspaceWrite:
		return "The sandbox decides which files commands may read and write. `sandbox_mode` is `workspace-write`: commands may read any file and write in `cwd` and the `writable_roots`; writing anywhere else needs approval. Network access is " + net + "."
	}
	return "The sandbox decides which files commands may read and write. `sandbox_mode` is `read-only`: commands may only read files. Network access is " + net + "."
}

// granularText covers a granular policy: escalation as under on-request
// when its sandbox approvals may reach the user, and which questions are
// refused without being asked.
func granularText(g agent.GranularApproval) string {
	var b strings.Builder
	if g.SandboxApproval {
		b.WriteString(escalationText)
	} else {
		b.WriteString("Approval policy: granular, without sandbox approvals. Never set `sandbox_permissions`: a command that asks for escalation is refused, and so is a patch that writes outside the writable roots. A command the sandbox denied is not offered to run again without it.\n")
	}
	if !g.Rules {
		b.WriteString("A command that a rule says to ask about is refused without asking.\n")
	}
	return b.String()
}

// escalationText covers on-request: how and when to ask to leave the
// sandbox, and how to choose a prefix_rule.
const escalationText = `# Asking to run outside the sandbox

A command leaves the sandbox when the user approves it, or when a rule the user approved earlier allows it. A command line is judged in segments, split at the shell's control operators (pipes |, && and ||, ;, and subshells (...) and $(...)); each segment is checked against the sandbox and the rules by itself. For example, ` + "`git pull | tee output.txt`" + ` is the two segments ["git", "pull"] and ["tee", "output.txt"]. A command that uses redirection (>, >>, <), substitution, environment assignments (FOO=bar) or wildcards (*, ?) is never matched against rules, so that an approved rule allows no more than it says.

## How to ask

To run a command with escalated permissions:
- set ` + "`sandbox_permissions`" + ` to ` + "`\"require_escalated\"`" + `;
- put a short question for the user in ` + "`justification`" + `, such as "Do you want to install this project's dependencies?";
- optionally give a ` + "`prefix_rule`" + `, which the user may approve for good.

Ask at once, through these parameters, instead of messaging the user first.

## When to ask

- The command must write where the sandbox does not allow (tests that write to /var, for instance).
- It starts a GUI program (open, xdg-open, osascript) to show a browser or a file.
- A command that matters for the task failed because of the sandbox, or with what looks like a sandboxed network failure (name resolution, a package registry, a download): run it again with ` + "`require_escalated`" + `.
- It is destructive (rm, git reset...) and the user did not ask for it.
Escalate with care, but when the task needs it, ask: do not work around approvals with other tools.

## Choosing a prefix_rule

Ask for a prefix that covers the similar requests the user may make later without asking again: a category of commands of reasonable scope, rarely the whole command. Never ask for one so broad that approving it would be unwise, such as ["python3"] or ["python", "-"], which run any script; never for a destructive command such as rm; never when the command uses a heredoc or a herestring. Good prefixes: ["npm", "run", "dev"], ["gh", "pr", "check"], ["cargo", "test"].
`

// writableRoots are the directories a workspace-write command may write:
// the cwd, the workspace roots, the configured roots, /tmp and $TMPDIR
// unless excluded; sorted.
func writableRoots(s agent.Settings) []string {
	set := map[string]bool{}
	if s.Cwd != "" {
		set[s.Cwd] = true
	}
	for _, r := range writablePaths(s) {
		set[r] = true
	}
	if !s.Sandbox.ExcludeSlashTmp {
		set["/tmp"] = true
	}
	if d := os.Getenv("TMPDIR"); d != "" && !s.Sandbox.ExcludeTmpdirEnvVar && filepath.IsAbs(d) {
		set[filepath.Clean(d)] = true
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// protectedNames stay read-only inside a writable root.
var protectedNames = []string{".git", ".agents", ".codex", ".aws"}

// environmentText is the environment_context block: cwd, shell, date,
// time zone, and the filesystem the sandbox gives commands.
func environmentText(s agent.Settings, shell string, now time.Time) string {
	return envBlock(envHead(s, shell), envRest(s, now))
}

// envBlock is an environment context of its parts; head may be "".
func envBlock(head, rest string) string { return envOpen + "\n" + head + rest + envClose }

// envHead is the part of the environment context that a later turn's
// block leaves out when it is unchanged, as Codex 0.169 does: the cwd and
// the shell.
func envHead(s agent.Settings, shell string) string {
	return fmt.Sprintf("  <cwd>%s</cwd>\n  <shell>%s</shell>\n", xmlEscape(s.Cwd), xmlEscape(filepath.Base(shell)))
}

// envRest is the rest: date, time zone and filesystem. The workspace
// roots are the thread's (agent.WorkspaceRoots: the cwd, or the roots the
// client asked for); under workspace-write they and the configured
// writable roots are writable, and the protected names of each are
// listed name by name, as Codex lists them.
func envRest(s agent.Settings, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  <current_date>%s</current_date>\n", now.Format("2006-01-02"))
	fmt.Fprintf(&b, "  <timezone>%s</timezone>\n", xmlEscape(timeZoneName()))
	b.WriteString("  <filesystem><workspace_roots>")
	for _, r := range agent.WorkspaceRoots(s) {
		fmt.Fprintf(&b, "<root>%s</root>", xmlEscape(r))
	}
	b.WriteString("</workspace_roots>")
	switch s.Sandbox.Mode {
	case agent.SandboxDangerFullAccess:
		b.WriteString(`<permission_profile type="disabled"><file_system type="unrestricted" /></permission_profile>`)
	default:
		b.WriteString(`<permission_profile type="managed"><file_system type="restricted">`)
		b.WriteString(`<entry access="read"><special>:root</special></entry>`)
		if s.Sandbox.Mode == agent.SandboxWorkspaceWrite {
			roots := writablePaths(s)
			for _, r := range roots {
				fmt.Fprintf(&b, `<entry access="write"><path>%s</path></entry>`, xmlEscape(r))
			}
			if !s.Sandbox.ExcludeSlashTmp {
				b.WriteString(`<entry access="write"><special>:slash_tmp</special></entry>`)
			}
			if !s.Sandbox.ExcludeTmpdirEnvVar {
				b.WriteString(`<entry access="write"><special>:tmpdir</special></entry>`)
			}
			for _, n := range protectedNames {
				for _, r := range roots {
					fmt.Fprintf(&b, `<entry access="read"><path>%s</path></entry>`, xmlEscape(filepath.Join(r, n)))
				}
			}
		}
		b.WriteString(`</file_system></permission_profile>`)
	}
	b.WriteString("</filesystem>\n")
	return b.String()
}

const envClose = "</environment_context>"

// splitEnv splits an environment context block into its head (cwd and
// shell lines, "" when the block left them out) and the rest.
func splitEnv(text string) (head, rest string) {
	body := strings.TrimSuffix(strings.TrimPrefix(text, envOpen+"\n"), envClose)
	for len(body) > 0 {
		line := body
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			line = body[:i+1]
		}
		body = body[len(line):]
		if strings.HasPrefix(line, "  <cwd>") || strings.HasPrefix(line, "  <shell>") {
			head += line
		} else {
			rest += line
		}
	}
	return head, rest
}

// writablePaths are the directories a workspace-write command may write
// besides the temporary ones: the workspace roots, then the configured
// writable roots, each once.
func writablePaths(s agent.Settings) []string {
	roots := agent.WorkspaceRoots(s)
	for _, r := range s.Sandbox.WritableRoots {
		if r != "" && !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

// timeZoneName is the IANA name of the local time zone: $TZ, else the
// target of /etc/localtime, else /etc/timezone, else Etc/UTC.
func timeZoneName() string {
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" && !strings.HasPrefix(tz, "/") {
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok && name != "" {
			return name
		}
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		if name := strings.TrimSpace(string(b)); name != "" && len(name) < 64 {
			return name
		}
	}
	return "Etc/UTC"
}

var xmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func xmlEscape(s string) string { return xmlReplacer.Replace(s) }
