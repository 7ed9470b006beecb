package appserver

import (
	"fmt"
	"os"
	"slices"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/sandbox"
)

// execSandbox is the sandbox a command/exec runs under, as Codex chooses
// it: the request's permissionProfile (whose workspace is the command's
// cwd), else its sandboxPolicy, else the configured sandbox (both with the
// server's cwd as the workspace). Managed requirements refuse a mode they
// do not allow.
func (s *Server) execSandbox(p appproto.CommandExecParams, cwd string) (sandbox.Policy, error) {
	cfg := s.core.Config()
	sb, workspace := cfg.Sandbox, cfg.Cwd
	if workspace == "" {
		workspace, _ = os.Getwd()
	}
	switch {
	case p.PermissionProfile != nil:
		prof, ok := profileSandbox(*p.PermissionProfile)
		if !ok {
			return sandbox.Policy{}, invalidRequest(fmt.Sprintf("invalid permission profile: default_permissions refers to unknown built-in profile `%s`", *p.PermissionProfile))
		}
		sb = prof
		if cwd != "" {
			workspace = cwd
		}
	case p.SandboxPolicy != nil:
		sb = agentSandbox(*p.SandboxPolicy)
	}
	if req := s.cfg.Requirements; req != nil && len(req.AllowedSandboxModes) > 0 && (p.PermissionProfile != nil || p.SandboxPolicy != nil) &&
		sb.Mode != agent.SandboxExternal && !slices.Contains(req.AllowedSandboxModes, string(sb.Mode)) {
		what := "sandbox policy"
		if p.PermissionProfile != nil {
			what = "permission profile"
		}
		return sandbox.Policy{}, invalidRequest(fmt.Sprintf("invalid %s: sandbox mode `%s` is not allowed by the managed requirements", what, sb.Mode))
	}
	mode := sandbox.Mode(sb.Mode)
	if sb.Mode == agent.SandboxExternal {
		// The caller confines the server and its commands itself.
		mode = sandbox.DangerFullAccess
	}
	return sandbox.Policy{Mode: mode, Cwd: workspace, WritableRoots: sb.WritableRoots, NetworkAccess: sb.NetworkAccess,
		ExcludeTmpdirEnvVar: sb.ExcludeTmpdirEnvVar, ExcludeSlashTmp: sb.ExcludeSlashTmp}, nil
}

// confineExec returns argv wrapped to run under pol (re-running this
// program as the sandbox helper), or an internal error when this kernel
// cannot enforce pol: a sandbox is never dropped.
func (s *Server) confineExec(pol sandbox.Policy, argv []string) ([]string, error) {
	if err := s.sandboxCheck(pol.Mode); err != nil {
		return nil, internalError("failed to spawn command: " + err.Error())
	}
	if !pol.Mode.Confined() {
		return argv, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, internalError("failed to spawn command: finding the sandbox helper: " + err.Error())
	}
	wrapped, err := sandbox.Wrap(pol, argv, self)
	if err != nil {
		return nil, internalError("failed to spawn command: " + err.Error())
	}
	return wrapped, nil
}
