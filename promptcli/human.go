package promptcli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/appserver"
)

// maxOutputLines is how much of a command's output stderr shows, as Codex
// shows it (the model sees all of it).
const maxOutputLines = 20

// humanSink prints a turn for a person: the answer on stdout as it
// streams, progress on stderr. The shapes of the progress lines follow
// `codex exec` (a "user", "exec", "codex" label line, then the content), so
// that a transcript of either reads the same.
type humanSink struct {
	out, err io.Writer
	banner   string
	prompt   string

	// streamed holds the agent messages whose deltas reached stdout.
	streamed map[string]bool
	// midLine: stdout's last byte written was not a newline.
	midLine bool
	// lastError is the last error printed, not to print it twice when
	// the turn fails with it.
	lastError string
}

func newHumanSink(stdout, stderr io.Writer, banner, prompt string) *humanSink {
	if banner == "" {
		banner = "codexd exec"
	}
	return &humanSink{out: stdout, err: stderr, banner: banner, prompt: prompt, streamed: make(map[string]bool)}
}

func (s *humanSink) threadStarted(r appproto.ThreadStartResponse) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n--------\n", s.banner)
	fmt.Fprintf(&b, "workdir: %s\nmodel: %s\nprovider: %s\n", r.Cwd, r.Model, r.ModelProvider)
	fmt.Fprintf(&b, "approval: %s\nsandbox: %s\n", approvalName(r.ApprovalPolicy), sandboxSummary(r.Sandbox))
	if r.ReasoningEffort != nil {
		fmt.Fprintf(&b, "reasoning effort: %s\n", *r.ReasoningEffort)
	}
	fmt.Fprintf(&b, "session id: %s\n--------\n", r.Thread.ID)
	if s.prompt != "" { // a review names itself when it starts
		fmt.Fprintf(&b, "user\n%s\n", strings.TrimRight(s.prompt, "\n"))
	}
	_, _ = io.WriteString(s.err, b.String())
}

func (s *humanSink) notification(m appserver.Message, _ *appproto.ThreadTokenUsage) {
	switch p := m.Params.(type) {
	case appproto.ItemStartedNotification:
		switch {
		case p.Item.AgentMessage != nil:
			fmt.Fprintln(s.err, "codex")
		case p.Item.CommandExecution != nil:
			c := p.Item.CommandExecution
			fmt.Fprintf(s.err, "exec\n%s in %s\n", c.Command, c.Cwd)
		}
	case appproto.DeltaNotification:
		if m.Method != appproto.AgentMessageDelta.Name() || p.Delta == "" {
			return
		}
		s.streamed[p.ItemID] = true
		s.write(p.Delta)
	case appproto.ItemCompletedNotification:
		s.itemCompleted(p.Item)
	case appproto.TurnPlanUpdatedNotification:
		var b strings.Builder
		b.WriteString("plan\n")
		if p.Explanation != nil && *p.Explanation != "" {
			fmt.Fprintf(&b, "%s\n", *p.Explanation)
		}
		for _, st := range p.Plan {
			mark := "[ ]"
			switch st.Status {
			case "completed":
				mark = "[x]"
			case "inProgress":
				mark = "[>]"
			}
			fmt.Fprintf(&b, "  %s %s\n", mark, st.Step)
		}
		_, _ = io.WriteString(s.err, b.String())
	case appproto.WarningNotification:
		fmt.Fprintln(s.err, "warning:", p.Message)
	case appproto.ErrorNotification:
		msg := errorText(p.Error)
		if p.WillRetry {
			fmt.Fprintln(s.err, "warning:", msg)
			return
		}
		s.lastError = p.Error.Message
		fmt.Fprintln(s.err, "ERROR:", msg)
	}
}

func (s *humanSink) itemCompleted(it appproto.ThreadItem) {
	switch {
	case it.AgentMessage != nil:
		a := it.AgentMessage
		if !s.streamed[a.ID] && a.Text != "" {
			s.write(a.Text)
		}
		delete(s.streamed, a.ID)
		s.endLine()
	case it.EnteredReviewMode != nil:
		fmt.Fprintf(s.err, "user\n%s\n", it.EnteredReviewMode.Review)
	case it.Reasoning != nil:
		if text := strings.TrimSpace(strings.Join(it.Reasoning.Summary, "\n")); text != "" {
			fmt.Fprintf(s.err, "thinking\n%s\n", text)
		}
	case it.CommandExecution != nil:
		s.commandCompleted(it.CommandExecution)
	case it.FileChange != nil:
		f := it.FileChange
		var b strings.Builder
		fmt.Fprintf(&b, "apply patch\npatch: %s\n", f.Status)
		for _, c := range f.Changes {
			letter := map[string]string{"add": "A", "delete": "D"}[c.Kind.Type]
			if letter == "" {
				letter = "M"
			}
			path := c.Path
			if c.Kind.MovePath != nil {
				path += " -> " + *c.Kind.MovePath
			}
			add, del := diffStat(c.Kind.Type, c.Diff)
			fmt.Fprintf(&b, "  %s %s (+%d -%d)\n", letter, path, add, del)
		}
		_, _ = io.WriteString(s.err, b.String())
	}
}

func (s *humanSink) commandCompleted(c *appproto.CommandExecutionItem) {
	took := ""
	if c.DurationMs != nil {
		took = " in " + formatDuration(time.Duration(*c.DurationMs)*time.Millisecond)
	}
	var b strings.Builder
	switch {
	case c.Status == "declined":
		b.WriteString(" declined\n")
	case c.ExitCode != nil && *c.ExitCode == 0:
		fmt.Fprintf(&b, " succeeded%s:\n", took)
	case c.ExitCode != nil:
		fmt.Fprintf(&b, " exited %d%s:\n", *c.ExitCode, took)
	default:
		fmt.Fprintf(&b, " %s%s:\n", c.Status, took)
	}
	if c.AggregatedOutput != nil {
		out := strings.TrimRight(*c.AggregatedOutput, "\n")
		if out != "" {
			lines := strings.Split(out, "\n")
			if len(lines) > maxOutputLines {
				more := len(lines) - maxOutputLines
				lines = append(lines[:maxOutputLines], fmt.Sprintf("… %d more line%s", more, plural(more)))
			}
			b.WriteString(strings.Join(lines, "\n"))
			b.WriteByte('\n')
		}
	}
	_, _ = io.WriteString(s.err, b.String())
}

func (s *humanSink) turnEnded(t appproto.Turn, u *appproto.ThreadTokenUsage) {
	s.endLine()
	switch t.Status {
	case appproto.TurnCompleted:
		if u != nil && u.Total.TotalTokens > 0 {
			fmt.Fprintf(s.err, "tokens used: %s\n", thousands(u.Total.TotalTokens))
		}
	case appproto.TurnFailed:
		msg := "turn failed"
		if t.Error != nil {
			if t.Error.Message == s.lastError {
				return
			}
			msg = errorText(*t.Error)
		} else if s.lastError != "" {
			return
		}
		fmt.Fprintln(s.err, "ERROR:", msg)
	case appproto.TurnInterrupted:
		fmt.Fprintln(s.err, "turn interrupted")
	}
}

func (s *humanSink) notice(msg string) { fmt.Fprintln(s.err, msg) }

// close ends the answer's line, also when a run is cut short.
func (s *humanSink) close() { s.endLine() }

func (s *humanSink) failure(msg string) {
	s.endLine()
	fmt.Fprintln(s.err, "ERROR:", msg)
}

// write puts answer text on stdout.
func (s *humanSink) write(text string) {
	_, _ = io.WriteString(s.out, text)
	s.midLine = !strings.HasSuffix(text, "\n")
}

// endLine ends stdout's line, so that every message, the last one
// included, ends with a newline.
func (s *humanSink) endLine() {
	if s.midLine {
		_, _ = io.WriteString(s.out, "\n")
		s.midLine = false
	}
}

func approvalName(a appproto.AskForApproval) string {
	if a.IsGranular() {
		return "granular"
	}
	return a.Policy
}

// sandboxSummary names a sandbox policy the way Codex's header does.
func sandboxSummary(p appproto.SandboxPolicy) string {
	switch p.Type {
	case appproto.SandboxDangerFullAccess:
		return "danger-full-access"
	case appproto.SandboxReadOnly:
		if p.NetworkAccess {
			return "read-only (network access enabled)"
		}
		return "read-only"
	case appproto.SandboxExternal:
		return "external-sandbox"
	case appproto.SandboxWorkspaceWrite:
		roots := []string{"workdir"}
		roots = append(roots, p.WritableRoots...)
		if !p.ExcludeSlashTmp {
			roots = append(roots, "/tmp")
		}
		if !p.ExcludeTmpdirEnvVar {
			roots = append(roots, "$TMPDIR")
		}
		s := "workspace-write [" + strings.Join(roots, ", ") + "]"
		if p.NetworkAccess {
			s += " (network access enabled)"
		}
		return s
	}
	return p.Type
}

// diffStat counts the lines a change adds and removes: the diff of an
// added or deleted file is its content, that of an update unified diff
// hunks.
func diffStat(kind, diff string) (add, del int) {
	lines := strings.Count(strings.TrimSuffix(diff, "\n"), "\n") + 1
	if diff == "" {
		lines = 0
	}
	switch kind {
	case "add":
		return lines, 0
	case "delete":
		return 0, lines
	}
	for line := range strings.SplitSeq(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		case strings.HasPrefix(line, "+"):
			add++
		case strings.HasPrefix(line, "-"):
			del++
		}
	}
	return add, del
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
