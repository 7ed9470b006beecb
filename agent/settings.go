package agent

// ApprovalPolicy says when a tool call needs the user's approval, with
// Codex's meanings:
//   - Untrusted: only commands known to be safe run without asking.
//   - OnFailure: run sandboxed; ask to run unsandboxed when the sandbox
//     denied the command.
//   - OnRequest: the model decides, asking for escalation when it needs it.
//   - Never: never ask; failures go back to the model.
type ApprovalPolicy string

const (
	ApprovalUntrusted ApprovalPolicy = "untrusted"
	ApprovalOnFailure ApprovalPolicy = "on-failure"
	ApprovalOnRequest ApprovalPolicy = "on-request"
	ApprovalNever     ApprovalPolicy = "never"
	// ApprovalGranular is Codex's granular policy: Settings.Granular says
	// which kinds of prompt may still reach the user.
	ApprovalGranular ApprovalPolicy = "granular"
)

// GranularApproval is Codex 0.169's GranularApprovalConfig: each flag
// allows one kind of prompt; a kind that is not allowed is rejected
// without asking. (For MCP, only MCPElicitations matters: a server's
// elicitation is declined without it; a tool call's approval asks as
// under on-request whatever the flags, as in Codex.)
type GranularApproval struct {
	SandboxApproval    bool
	Rules              bool
	SkillApproval      bool
	RequestPermissions bool
	MCPElicitations    bool
}

// SandboxMode is how far commands are confined.
type SandboxMode string

const (
	SandboxReadOnly         SandboxMode = "read-only"
	SandboxWorkspaceWrite   SandboxMode = "workspace-write"
	SandboxDangerFullAccess SandboxMode = "danger-full-access"
	// SandboxExternal means the caller confines commands itself.
	SandboxExternal SandboxMode = "external"
)

// SandboxPolicy is a sandbox mode with its parameters.
type SandboxPolicy struct {
	Mode SandboxMode
	// WritableRoots are writable in addition to the cwd (workspace-write).
	WritableRoots []string
	// NetworkAccess allows outbound network (read-only, workspace-write).
	NetworkAccess bool
	// ExcludeTmpdirEnvVar and ExcludeSlashTmp keep $TMPDIR and /tmp
	// read-only under workspace-write.
	ExcludeTmpdirEnvVar bool
	ExcludeSlashTmp     bool
}

// Settings are what a turn runs with. Each thread has its own, which turns
// and settings updates change.
type Settings struct {
	Model         string
	ModelProvider string
	Cwd           string
	Approval      ApprovalPolicy
	// Granular holds the flags of ApprovalGranular (nil otherwise).
	Granular *GranularApproval
	// ApprovalsReviewer is who reviews approvals ("user" by default).
	ApprovalsReviewer string
	Sandbox           SandboxPolicy
	// PermissionProfile is the named profile the sandbox came from
	// (":read-only", ":workspace", ":danger-full-access"), if any.
	PermissionProfile string
	ReasoningEffort   string // "" means the model's default
	ReasoningSummary  string // "auto", "concise", "detailed", "none"
	Personality       string
	ServiceTier       string
	// CollaborationMode is "default" or "plan".
	CollaborationMode string
	// Environments are where the thread's tools run, the first being the
	// current one: nil means the default environment, empty (non-nil) none
	// (every tool that needs a machine refuses).
	Environments []Environment
	// RuntimeWorkspaceRoots are the workspace roots a client asked for
	// (thread/start's or turn/start's runtimeWorkspaceRoots); nil means
	// the derived ones (WorkspaceRoots).
	RuntimeWorkspaceRoots []string
}

// Environment selects an environment (an exec-server, by id) and where in
// it the thread works.
type Environment struct {
	ID  string
	Cwd string
	// RuntimeWorkspaceRoots are the environment's workspace roots; nil
	// means Cwd, empty (non-nil) none.
	RuntimeWorkspaceRoots []string
}

// Overrides change some settings; nil fields keep the current value.
type Overrides struct {
	Model         *string
	ModelProvider *string
	Cwd           *string
	Approval      *ApprovalPolicy
	// Granular goes with an Approval of ApprovalGranular.
	Granular          *GranularApproval
	ApprovalsReviewer *string
	Sandbox           *SandboxPolicy
	PermissionProfile *string
	ReasoningEffort   *string
	ReasoningSummary  *string
	Personality       *string
	ServiceTier       *string
	CollaborationMode *string
	// Environments, when set, replaces the environments (an empty slice
	// selects none).
	Environments *[]Environment
	// RuntimeWorkspaceRoots, when set, replaces the requested workspace
	// roots.
	RuntimeWorkspaceRoots *[]string
}

// Apply returns s with o applied.
func (o Overrides) Apply(s Settings) Settings {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.Model, o.Model)
	set(&s.ModelProvider, o.ModelProvider)
	set(&s.Cwd, o.Cwd)
	if o.Approval != nil {
		s.Approval, s.Granular = *o.Approval, nil
		if *o.Approval == ApprovalGranular && o.Granular != nil {
			g := *o.Granular
			s.Granular = &g
		}
	}
	set(&s.ApprovalsReviewer, o.ApprovalsReviewer)
	if o.Sandbox != nil {
		s.Sandbox = *o.Sandbox
		s.Sandbox.WritableRoots = append([]string(nil), o.Sandbox.WritableRoots...)
	}
	set(&s.PermissionProfile, o.PermissionProfile)
	set(&s.ReasoningEffort, o.ReasoningEffort)
	set(&s.ReasoningSummary, o.ReasoningSummary)
	set(&s.Personality, o.Personality)
	set(&s.ServiceTier, o.ServiceTier)
	set(&s.CollaborationMode, o.CollaborationMode)
	if o.Environments != nil {
		s.Environments = append([]Environment{}, (*o.Environments)...)
	}
	if o.RuntimeWorkspaceRoots != nil {
		s.RuntimeWorkspaceRoots = append([]string{}, (*o.RuntimeWorkspaceRoots)...)
	}
	return s
}

// IsZero reports whether o changes nothing.
func (o Overrides) IsZero() bool { return o == Overrides{} }
