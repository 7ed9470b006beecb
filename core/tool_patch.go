package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/core/safety"
	"github.com/codexd/codexd/core/tools"
	"github.com/codexd/codexd/execclient"
)

// applyPatch runs the apply_patch tool: text is the patch (its heredoc
// wrapping is tolerated, as Codex tolerates it).
func (tr *turn) applyPatch(callID, text, cwd string) string {
	inv, err := applypatch.Intercept([]string{"apply_patch", text})
	if err != nil {
		return tools.PatchVerifyFailedText + err.Error()
	}
	if inv == nil {
		return tools.PatchVerifyFailedText + "not a patch"
	}
	return tr.applyInvocation(callID, inv, cwd)
}

// applyInvocation verifies a patch against the files, asks for approval
// when the policy wants it, and applies it through the exec-server. A patch
// that does not verify changes nothing.
func (tr *turn) applyInvocation(callID string, inv *applypatch.Invocation, cwd string) string {
	t := tr.t
	start := time.Now()
	c, err := t.core.exec(tr.ctx)
	if err != nil {
		return tools.PatchVerifyFailedText + err.Error()
	}
	fsys := execFS{dial: func(context.Context) (*execclient.Client, error) { return c, nil }}
	plan, err := applypatch.Compute(tr.ctx, fsys, inv.Cwd(cwd), inv.Patch)
	if err != nil {
		return tools.PatchVerifyFailedText + err.Error()
	}
	if plan.Empty() {
		return "patch rejected: empty patch"
	}
	// Decide on, and write, where the paths really lead (see landing).
	land, err := resolveLanding(tr.ctx, fsys, plan)
	if err != nil {
		return tools.PatchVerifyFailedText + err.Error()
	}
	reals := land.reals()
	var roots *writeRoots
	rootsOf := func() writeRoots {
		if roots == nil {
			w := realRoots(tr.ctx, fsys, sandboxRoots(tr.ctx, fsys, tr.settings, t.core.commandEnv(t.id)))
			roots = &w
		}
		return *roots
	}
	changes := fileUpdates(plan)
	item := func(status agent.ItemStatus) *agent.FileChange {
		return &agent.FileChange{ID: callID, Changes: changes, Status: status}
	}
	decision := tr.assessPatch(reals, rootsOf)
	if decision == safety.Forbidden {
		// Refused before it starts: Codex shows no file change for it.
		return "patch rejected: " + patchRefusal(tr.settings)
	}
	tr.emit(agent.ItemStarted{Item: item(agent.ItemStatusInProgress)})

	switch decision {
	case safety.Prompt:
		ch := tr.request(callID)
		tr.emit(agent.PatchApprovalRequest{CallID: callID, Changes: changes, Reason: land.redirected(rootsOf())})
		op, ok := tr.await(callID, ch)
		if !ok {
			return "aborted"
		}
		d, _ := op.(agent.PatchDecision)
		switch d.Decision {
		case agent.Accept:
		case agent.AcceptForSession:
			t.mu.Lock()
			for _, p := range reals {
				t.approvedPatches[p] = true
			}
			t.mu.Unlock()
		case agent.Cancel:
			tr.emit(agent.ItemCompleted{Item: item(agent.ItemStatusDeclined)})
			t.mu.Lock()
			tr.interrupt()
			t.mu.Unlock()
			return "aborted"
		case agent.RequestFailed:
			tr.emit(agent.ItemCompleted{Item: item(agent.ItemStatusFailed)})
			return tools.PatchApprovalFailed
		default:
			tr.emit(agent.ItemCompleted{Item: item(agent.ItemStatusDeclined)})
			return tools.PatchRejectedByUser
		}
		// The prompt may have been open for minutes, and the user may have
		// edited the files meanwhile: apply the hunks to the files as they
		// are now, or write nothing (see applypatch.Rebase).
		now, err := applypatch.Rebase(tr.ctx, fsys, plan, inv.Patch)
		if err != nil {
			tr.emit(agent.ItemCompleted{Item: item(agent.ItemStatusFailed)})
			return patchConflictText(err)
		}
		plan = now
		changes = fileUpdates(plan)
	}

	res, err := plan.Apply(tr.ctx, landedFS{execFS: fsys, l: land})
	if err != nil {
		tr.emit(agent.ItemCompleted{Item: item(agent.ItemStatusFailed)})
		if we, ok := err.(*applypatch.WriteError); ok && len(we.Written) > 0 {
			tr.recordDiff(fsys, plan, we.Written)
		}
		return fmt.Sprintf("Exit code: 1\nWall time: %s seconds\nOutput:\n%s\n", patchWallTime(time.Since(start)), err.Error())
	}
	tr.emit(agent.ItemCompleted{Item: item(agent.ItemStatusCompleted)})
	tr.recordDiff(fsys, plan, nil)
	return fmt.Sprintf("Exit code: 0\nWall time: %s seconds\nOutput:\n%s", patchWallTime(time.Since(start)), res.Summary())
}

// patchWallTime is a patch's wall time as Codex prints it: seconds to a
// tenth, without a trailing ".0" ("0", "0.1", "2").
func patchWallTime(d time.Duration) string {
	return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64)
}

// shellPatchOutput is what exec_command answers for a patch sent through
// the shell: one that was applied inside exec_command's own header, as
// Codex 0.169 sends it (a wall time of nothing, then the patch's output);
// one refused or failed as it is.
func shellPatchOutput(out string) string {
	if strings.HasPrefix(out, "Exit code: 0\n") {
		return "Wall time: 0.0000 seconds\nOutput:\n" + out
	}
	return out
}

// patchConflictText is what the model reads when an approved patch could
// not be applied to the files as they became while it waited.
func patchConflictText(err error) string {
	var ce *applypatch.ConflictError
	if errors.As(err, &ce) {
		return fmt.Sprintf("patch rejected: %s changed while the patch was waiting for approval (%s); nothing was written. Read the file again and send a new patch if the change is still needed.", ce.Path, ce.Reason)
	}
	return "patch rejected: the files could not be read again after the approval: " + err.Error() + "; nothing was written."
}

// assessPatch decides whether a patch that writes paths (real paths, see
// landing) needs approval, as Codex's assess_patch_safety does: untrusted
// always asks; otherwise a patch that only writes where the sandbox lets
// commands write is applied, and one that writes elsewhere asks (or is
// refused under never, and under a granular policy without
// sandbox_approval). Paths approved for the session do not ask again.
// roots is called only when needed.
func (tr *turn) assessPatch(paths []string, roots func() writeRoots) safety.Decision {
	t := tr.t
	t.mu.Lock()
	approved := true
	for _, p := range paths {
		if !t.approvedPatches[p] {
			approved = false
		}
	}
	t.mu.Unlock()
	if approved {
		return safety.Allow
	}
	s := tr.settings
	if s.Approval == agent.ApprovalUntrusted {
		return safety.Prompt
	}
	w := roots()
	writable := true
	for _, p := range paths {
		if !w.allows(p) {
			writable = false
			break
		}
	}
	if writable {
		return safety.Allow
	}
	if s.Approval == agent.ApprovalNever || s.Approval == agent.ApprovalGranular && !granularFlags(s).SandboxApproval {
		return safety.Forbidden
	}
	return safety.Prompt
}

// patchRefusal is Codex's reason for refusing a patch without asking: a
// read-only sandbox blocks every write; otherwise the patch writes outside
// the project.
func patchRefusal(s agent.Settings) string {
	if s.Sandbox.Mode == agent.SandboxReadOnly {
		return "writing is blocked by read-only sandbox; rejected by user approval settings"
	}
	return "writing outside of the project; rejected by user approval settings"
}

// fileUpdates describes a plan's changes for a FileChange item.
func fileUpdates(plan *applypatch.Plan) []agent.FileUpdate {
	out := make([]agent.FileUpdate, 0, len(plan.Changes))
	for _, c := range plan.Changes {
		u := agent.FileUpdate{Path: c.Path, Kind: string(c.Kind), MovePath: c.MovePath, Diff: c.UnifiedDiff}
		switch c.Kind {
		case applypatch.KindAdd:
			u.Diff = c.NewContent
		case applypatch.KindDelete:
			u.Diff = c.OldContent
		}
		out = append(out, u)
	}
	return out
}

// recordDiff notes what a patch wrote in the turn's diff and sends the
// turn diff as Codex 0.169 does after a patch: twice.
func (tr *turn) recordDiff(fsys applypatch.FS, plan *applypatch.Plan, written []string) {
	if tr.diff.root == "" {
		tr.diff.root = displayRoot(tr.ctx, fsys, tr.settings.Cwd)
	}
	tr.diff.record(plan, written)
	if u := tr.diff.unified(); u != "" {
		tr.emit(agent.TurnDiff{Diff: u})
		tr.emit(agent.TurnDiff{Diff: u})
	}
}
