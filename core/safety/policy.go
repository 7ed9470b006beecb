package safety

// Policy is an approval policy, with Codex's meanings.
type Policy string

const (
	Untrusted Policy = "untrusted"
	OnFailure Policy = "on-failure"
	OnRequest Policy = "on-request"
	Never     Policy = "never"
	// Granular is Codex's granular policy: its commands are decided as
	// under on-request; which of the prompts may reach the user is the
	// caller's to decide by the policy's flags.
	Granular Policy = "granular"
)

// RustName is the policy as Codex's messages print it (AskForApproval's
// Debug form).
func (p Policy) RustName() string {
	switch p {
	case Untrusted:
		return "UnlessTrusted"
	case OnFailure:
		return "OnFailure"
	case OnRequest:
		return "OnRequest"
	case Never:
		return "Never"
	}
	return string(p)
}

// Decision is what must happen before a command runs.
type Decision int

const (
	// Allow: run it (sandboxed, unless escalation was granted).
	Allow Decision = iota
	// Prompt: ask the user first.
	Prompt
	// Forbidden: refuse without asking.
	Forbidden
)

// Request describes a command about to run.
type Request struct {
	Argv   []string
	Policy Policy
	// Unrestricted is true when commands run without a filesystem sandbox
	// (danger-full-access, or an external sandbox).
	Unrestricted bool
	// Escalated is sandbox_permissions = "require_escalated".
	Escalated bool
	// PrefixRule is the model's suggested amendment.
	PrefixRule []string
}

// Requirement is the outcome of Assess.
type Requirement struct {
	Decision Decision
	// Reason explains a Forbidden decision.
	Reason string
	// Amendment is the command prefix the user may allow for good.
	Amendment []string
}

// bannedPrefixes are prefix rules Codex never proposes: they would allow
// any program.
var bannedPrefixes = [][]string{
	{"python3"}, {"python3", "-"}, {"python3", "-c"}, {"python"}, {"python", "-"}, {"python", "-c"},
	{"git"}, {"bash"}, {"bash", "-lc"}, {"sh"}, {"sh", "-c"}, {"sh", "-lc"}, {"zsh"}, {"zsh", "-lc"},
	{"/bin/zsh"}, {"/bin/zsh", "-lc"}, {"/bin/bash"}, {"/bin/bash", "-lc"}, {"env"}, {"sudo"},
	{"node"}, {"node", "-e"}, {"perl"}, {"perl", "-e"}, {"ruby"}, {"ruby", "-e"},
	{"php"}, {"php", "-r"}, {"lua"}, {"lua", "-e"},
}

// Assess decides as Codex's exec policy does with no rules loaded: each
// plain command of argv gets a decision from the heuristics below, and the
// strictest wins.
//
//   - untrusted: every command asks, even one that only reads (ls, cat):
//     Codex 0.169 does (observed side by side), and refuses the policy in
//     config.toml as no longer supported.
//   - on-request: commands run in the sandbox; one that asks for
//     escalation asks the user (under danger-full-access everything runs).
//   - on-failure: commands run in the sandbox; a sandbox denial asks later.
//   - never: commands run; nothing asks, and a dangerous command is refused.
//   - granular: as on-request.
//
// A possibly dangerous command (rm -rf, sudo) always asks, or is refused
// under never.
func Assess(r Request) Requirement {
	cmds, _ := Commands(r.Argv)
	out := Requirement{Decision: Allow}
	var firstPrompt []string
	for _, c := range cmds {
		d := decide(c, r)
		if d == Prompt && firstPrompt == nil {
			firstPrompt = c
		}
		if d > out.Decision {
			out.Decision = d
		}
	}
	switch out.Decision {
	case Forbidden:
		out.Reason = "approval required by policy, but AskForApproval is set to Never"
	case Prompt:
		// A script that is not plain is one command, the whole argv: that
		// is what Codex proposes for it.
		if len(r.PrefixRule) > 0 && !banned(r.PrefixRule) {
			out.Amendment = append([]string(nil), r.PrefixRule...)
		} else if firstPrompt != nil {
			out.Amendment = append([]string(nil), firstPrompt...)
		}
	}
	return out
}

func banned(p []string) bool {
	for _, b := range bannedPrefixes {
		if len(b) != len(p) {
			continue
		}
		eq := true
		for i := range b {
			if b[i] != p[i] {
				eq = false
				break
			}
		}
		if eq {
			return true
		}
	}
	return false
}

func decide(cmd []string, r Request) Decision {
	if isDangerous(cmd) {
		if r.Policy == Never {
			return Forbidden
		}
		return Prompt
	}
	switch r.Policy {
	case Never, OnFailure:
		return Allow
	case Untrusted:
		return Prompt
	case OnRequest, Granular:
		if r.Unrestricted {
			return Allow
		}
		if r.Escalated {
			return Prompt
		}
		return Allow
	}
	return Prompt
}
