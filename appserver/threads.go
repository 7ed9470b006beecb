package appserver

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// threadSource is the source Codex records for threads its app-server
// starts.
const threadSource = "vscode"

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (s *Server) threadStart(ctx context.Context, c *call, p appproto.ThreadStartParams) (appproto.ThreadStartResponse, error) {
	if err := checkRequestRoots(p.RuntimeWorkspaceRoots); err != nil {
		return appproto.ThreadStartResponse{}, err
	}
	if p.Permissions != nil && p.Sandbox != nil {
		return appproto.ThreadStartResponse{}, invalidRequest("`permissions` cannot be combined with `sandbox`")
	}
	rc, err := parseRequestConfig(p.Config)
	if err != nil {
		return appproto.ThreadStartResponse{}, err
	}
	req := overrideReq{model: p.Model, provider: p.ModelProvider, cwd: p.Cwd, reviewer: p.ApprovalsReviewer,
		approval: p.ApprovalPolicy, sandboxMode: p.Sandbox, permissions: p.Permissions, personality: p.Personality,
		serviceTier: p.ServiceTier}
	if _, err := s.overrides(req); err != nil {
		return appproto.ThreadStartResponse{}, err // the request's own members first
	}
	if err := checkRequestConfig(rc, configStart); err != nil {
		return appproto.ThreadStartResponse{}, err
	}
	applyRequestConfig(&req, rc, configStart) // the request's config, under its own members
	s.writtenDefaults(&req)                   // what config writes changed since the server started
	s.applyWorkspaceTable(&req, rc)
	o, err := s.overrides(req)
	if err != nil {
		return appproto.ThreadStartResponse{}, err
	}
	if err := s.checkProvider(o.ModelProvider, false); err != nil {
		return appproto.ThreadStartResponse{}, err
	}
	if o.Environments, err = s.environmentsOverride(p.Environments); err != nil {
		return appproto.ThreadStartResponse{}, err
	}
	if p.RuntimeWorkspaceRoots != nil {
		o.RuntimeWorkspaceRoots = &p.RuntimeWorkspaceRoots
	}
	noTools := rc.noTools()
	l, err := s.core.StartThread(ctx, agent.StartOptions{Overrides: o, Ephemeral: deref(p.Ephemeral), Source: threadSource,
		ThreadSource: deref(p.ThreadSource), BaseInstructions: p.BaseInstructions, DeveloperInstructions: p.DeveloperInstructions,
		Originator: s.originatorName(), NoTools: noTools})
	if err != nil {
		return appproto.ThreadStartResponse{}, coreError(err)
	}
	t, _ := s.loadThread(l)
	if t == nil {
		return appproto.ThreadStartResponse{}, internalError("server is shutting down")
	}
	t.subscribeLocked(c.sess)
	resp := t.startResponseLocked(false)
	// The answer goes first, then every connection learns of the thread,
	// still under the thread's lock: no event of the thread can precede
	// its thread/started.
	c.respond(resp, nil)
	started := newNote(appproto.ThreadStarted.Name(), appproto.ThreadStartedNotification{Thread: t.wireLocked(false)})
	for _, sess := range s.initializedSessions() {
		sess.send(started)
	}
	s.mcp.startedLocked(t) // its MCP servers' startup so far
	t.mu.Unlock()
	return resp, errDeferred
}

// jsonKind names a JSON value's type as serde's errors do.
func jsonKind(raw jsontextValue) string {
	switch raw.Kind() {
	case '"':
		return "string " + strconv.Quote(strings.Trim(string(raw), `"`))
	case 't', 'f':
		return "boolean `" + string(raw) + "`"
	case '0':
		if strings.ContainsAny(string(raw), ".eE") {
			return "floating point `" + string(raw) + "`"
		}
		return "integer `" + string(raw) + "`"
	case '[':
		return "sequence"
	}
	return "value"
}

// startResponseLocked is the answer of thread/start and thread/fork, and
// the first part of thread/resume's.
func (t *thread) startResponseLocked(withTurns bool) appproto.ThreadStartResponse {
	st := t.st.settings
	return appproto.ThreadStartResponse{
		Thread: t.wireLocked(withTurns), Model: st.Model, ModelProvider: st.ModelProvider,
		ServiceTier: optString(st.ServiceTier), DisabledPluginIDs: []string{}, Cwd: st.Cwd,
		RuntimeWorkspaceRoots: runtimeRoots(st), InstructionSources: []string{},
		ApprovalPolicy: wireApprovalOf(st.Approval, st.Granular), ApprovalsReviewer: reviewer(st), Sandbox: startSandbox(st),
		ActivePermissionProfile: activeProfile(st), ReasoningEffort: optString(st.ReasoningEffort),
		MultiAgentMode: "explicitRequestOnly",
	}
}

func (s *Server) threadResume(ctx context.Context, c *call, p appproto.ThreadResumeParams) (appproto.ThreadResumeResponse, error) {
	if err := checkRequestRoots(p.RuntimeWorkspaceRoots); err != nil {
		return appproto.ThreadResumeResponse{}, err
	}
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.ThreadResumeResponse{}, threadIDError(err)
	}
	if p.Permissions != nil && p.Sandbox != nil {
		return appproto.ThreadResumeResponse{}, invalidRequest("`permissions` cannot be combined with `sandbox`")
	}
	rc, err := parseRequestConfig(p.Config)
	if err != nil {
		return appproto.ThreadResumeResponse{}, err
	}
	o, err := s.resumeOverrides(p, nil)
	if err != nil {
		return appproto.ThreadResumeResponse{}, err
	}
	t := s.thread(id)
	fresh := false
	if t != nil {
		t.mu.Lock()
		if t.st.unloaded {
			t.mu.Unlock()
			// It is shutting down (idle, or archived): once its listener
			// has ended the core has let it go, and it loads afresh.
			select {
			case <-t.done:
			case <-ctx.Done():
				return appproto.ThreadResumeResponse{}, internalError("thread/resume: " + ctx.Err().Error())
			}
			t = nil
		} else if t.st.info.Ephemeral || !t.st.info.Materialized {
			// Codex resumes a loaded thread from its rollout too: one
			// with no user message yet, or an ephemeral one, has none.
			t.mu.Unlock()
			return appproto.ThreadResumeResponse{}, invalidRequest("no rollout found for thread id " + id)
		} else if t.cacheOnlyLocked() && resumeDiffers(p, t.st.settings) {
			// Codex 0.169 holds a loaded thread nobody is subscribed to,
			// with nothing running, for a cache entry: a resume that asks
			// for something else shuts it down and loads it afresh.
			t.st.unloaded = true
			t.mu.Unlock()
			if _, err := t.th.Submit(background, agent.Shutdown{}); err != nil {
				s.log.Debug("app-server: shutting a thread down to resume it anew", "thread", t.id, "err", err)
			}
			select {
			case <-t.done:
			case <-ctx.Done():
				return appproto.ThreadResumeResponse{}, internalError("thread/resume: " + ctx.Err().Error())
			}
			t = nil
		}
	}
	var warnings []string // the load's, sent first, as Codex does
	if t == nil {
		// A loaded thread ignores the config, as Codex's does; one loaded
		// now is held to it.
		if err := checkRequestConfig(rc, configResume); err != nil {
			return appproto.ThreadResumeResponse{}, s.configErrorFor(ctx, id, err)
		}
		if rc != nil {
			if o, err = s.resumeOverrides(p, rc); err != nil {
				return appproto.ThreadResumeResponse{}, s.configErrorFor(ctx, id, err)
			}
		}
		if err := s.checkProvider(o.ModelProvider, true); err != nil {
			return appproto.ThreadResumeResponse{}, s.configErrorFor(ctx, id, err)
		}
		l, w, err := s.resumeWarned(ctx, id, o)
		warnings = w
		if errors.Is(err, agent.ErrThreadNotFound) {
			return appproto.ThreadResumeResponse{}, invalidRequest("no rollout found for thread id " + id)
		} else if err != nil {
			return appproto.ThreadResumeResponse{}, coreError(err)
		}
		if t, fresh = s.loadThread(l); t == nil {
			return appproto.ThreadResumeResponse{}, internalError("server is shutting down")
		}
	}
	// Everything below happens under the thread's lock, so that the
	// snapshot and the subscription are atomic with respect to the
	// listener: the client gets every event after the snapshot, and none
	// it already holds.
	var warned, out outbox
	if fresh {
		// Loading the thread changed its status for everyone.
		t.st.status = appproto.ThreadStatus{Type: appproto.StatusNotLoaded}
		t.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusIdle}, &out)
	}
	t.subscribeLocked(c.sess)
	t.warnLocked(&warned, warnings)
	cm := collaborationMode(t.st.settings)
	resp := appproto.ThreadResumeResponse{ThreadStartResponse: t.startResponseLocked(!p.ExcludeTurns), CollaborationMode: &cm}
	warned.flush()
	out.flush() // status first, as Codex does
	c.respond(resp, nil)
	s.mcp.startedLocked(t) // a thread loaded now: its MCP servers' startup so far
	if u := t.st.usage; u != nil {
		turnID := t.st.lastTerminalTurnID
		if turnID == "" && len(t.st.history) > 0 {
			turnID = t.st.history[len(t.st.history)-1].ID
		}
		c.sess.send(newNote(appproto.ThreadTokenUsageUpdated.Name(), appproto.ThreadTokenUsageUpdatedNotification{
			ThreadID: t.id, TurnID: turnID, TokenUsage: wireUsage(*u)}))
	}
	t.replayLocked(c.sess, &out)
	out.flush()
	t.mu.Unlock()
	if fresh && len(resp.Thread.Turns) >= releaseAfterTurns {
		// Loading a long thread and encoding its turns allocated several
		// times what it keeps (10,000 items: 12.8 MiB kept, 90 MiB
		// allocated, a 32 MiB peak); Go returns those pages to the system
		// only at its scavenger's slow pace, so the server would sit at its
		// peak. Give them back now that the response is out.
		resp.Thread.Turns = nil
		debug.FreeOSMemory()
	}
	return resp, errDeferred
}

// resumeOverrides are the overrides of a thread/resume, with its config
// rc (nil: none, or a loaded thread's, which ignores it). The recorded
// model, provider and effort stay unless the request names a model, a
// provider or (in its config) an effort; then all three are the
// configuration's.
func (s *Server) resumeOverrides(p appproto.ThreadResumeParams, rc *requestConfig) (agent.Overrides, error) {
	req := overrideReq{model: p.Model, provider: p.ModelProvider, cwd: p.Cwd, reviewer: p.ApprovalsReviewer,
		approval: p.ApprovalPolicy, sandboxMode: p.Sandbox, permissions: p.Permissions, personality: p.Personality,
		serviceTier: p.ServiceTier}
	applyRequestConfig(&req, rc, configResume) // the request's config, under its own members
	s.writtenDefaults(&req)                    // what config writes changed since the server started
	s.applyWorkspaceTable(&req, rc)
	if p.Model != nil || p.ModelProvider != nil || rc.namesModel() {
		s.configModel(&req)
	} else {
		// The thread's own model, provider and effort, from its rollout.
		req.model, req.provider, req.effort = nil, nil, nil
	}
	o, err := s.overrides(req)
	if err == nil && p.RuntimeWorkspaceRoots != nil {
		o.RuntimeWorkspaceRoots = &p.RuntimeWorkspaceRoots
	}
	return o, err
}

// releaseAfterTurns is the size of a thread (in turns) whose load is
// followed by returning the freed memory to the system: a few
// milliseconds of collection, against tens of MiB kept otherwise.
const releaseAfterTurns = 1000

func (s *Server) threadFork(ctx context.Context, c *call, p appproto.ThreadForkParams) (appproto.ThreadForkResponse, error) {
	if err := checkRequestRoots(p.RuntimeWorkspaceRoots); err != nil {
		return appproto.ThreadForkResponse{}, err
	}
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.ThreadForkResponse{}, threadIDError(err)
	}
	if p.Permissions != nil && p.Sandbox != nil {
		return appproto.ThreadForkResponse{}, invalidRequest("`permissions` cannot be combined with `sandbox`")
	}
	rc, err := parseRequestConfig(p.Config)
	if err != nil {
		return appproto.ThreadForkResponse{}, err
	}
	req := overrideReq{model: p.Model, provider: p.ModelProvider, cwd: p.Cwd, reviewer: p.ApprovalsReviewer,
		approval: p.ApprovalPolicy, sandboxMode: p.Sandbox, permissions: p.Permissions, serviceTier: p.ServiceTier}
	if _, err := s.overrides(req); err != nil {
		return appproto.ThreadForkResponse{}, err // the request's own members first
	}
	if err := checkRequestConfig(rc, configFork); err != nil {
		return appproto.ThreadForkResponse{}, s.configErrorFor(ctx, id, err)
	}
	applyRequestConfig(&req, rc, configFork) // the request's config, under its own members
	s.applyWorkspaceTable(&req, rc)
	s.configModel(&req) // a fork's model, provider and effort are the configuration's, not its source's
	o, err := s.overrides(req)
	if err != nil {
		return appproto.ThreadForkResponse{}, err
	}
	if err := s.checkProvider(o.ModelProvider, false); err != nil {
		return appproto.ThreadForkResponse{}, s.configErrorFor(ctx, id, err)
	}
	if p.RuntimeWorkspaceRoots != nil {
		o.RuntimeWorkspaceRoots = &p.RuntimeWorkspaceRoots
	}
	noTools := rc.noTools()
	l, err := s.core.ForkThread(ctx, id, agent.StartOptions{Overrides: o, Ephemeral: p.Ephemeral, Source: threadSource,
		ThreadSource: deref(p.ThreadSource), BaseInstructions: p.BaseInstructions, DeveloperInstructions: p.DeveloperInstructions,
		Originator: s.originatorName(), NoTools: noTools})
	if errors.Is(err, agent.ErrThreadNotFound) {
		return appproto.ThreadForkResponse{}, invalidRequest("no rollout found for thread id " + id)
	} else if err != nil {
		return appproto.ThreadForkResponse{}, coreError(err)
	}
	t, _ := s.loadThread(l)
	if t == nil {
		return appproto.ThreadForkResponse{}, internalError("server is shutting down")
	}
	t.subscribeLocked(c.sess)
	resp := t.startResponseLocked(!p.ExcludeTurns)
	c.respond(resp, nil)
	started := newNote(appproto.ThreadStarted.Name(), appproto.ThreadStartedNotification{Thread: t.wireLocked(false)})
	for _, sess := range s.initializedSessions() {
		sess.send(started)
	}
	s.mcp.startedLocked(t) // the fork's MCP servers' startup so far
	t.mu.Unlock()
	return resp, errDeferred
}

// errNotMaterialized is Codex's answer for the turns of a thread that has
// no user message yet.
var errNotMaterialized = newError(-32601, "list_turns is not supported yet")

func (s *Server) threadRead(ctx context.Context, c *call, p appproto.ThreadReadParams) (appproto.ThreadReadResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.ThreadReadResponse{}, threadIDError(err)
	}
	if t := s.thread(id); t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.st.unloaded {
			if p.IncludeTurns && !t.st.info.Materialized && t.st.active == nil {
				return appproto.ThreadReadResponse{}, errNotMaterialized
			}
			return appproto.ThreadReadResponse{Thread: t.readLocked(p.IncludeTurns), ReadState: s.reads.snapshot(t.st.info)}, nil
		}
	}
	info, turns, err := s.core.ReadThread(ctx, id, p.IncludeTurns)
	if errors.Is(err, agent.ErrThreadNotFound) {
		return appproto.ThreadReadResponse{}, invalidRequest("thread not loaded: " + id)
	} else if err != nil {
		return appproto.ThreadReadResponse{}, coreError(err)
	}
	if p.IncludeTurns && !info.Materialized {
		return appproto.ThreadReadResponse{}, errNotMaterialized
	}
	var wt []appproto.Turn
	for _, t := range turns {
		wt = append(wt, wireTurn(t, appproto.ItemsFull))
	}
	return appproto.ThreadReadResponse{Thread: wireThread(info, appproto.ThreadStatus{Type: appproto.StatusNotLoaded}, nil, wt),
		ReadState: s.reads.snapshot(info)}, nil
}

// readLocked is a loaded thread as thread/read reports it: with the
// settings the core has now, as Codex 0.169 reads its live thread. A
// thread/settings/update's take effect when it is answered, and the
// listener may not have projected their thread/settings/updated yet.
func (t *thread) readLocked(withTurns bool) appproto.Thread {
	th := t.wireLocked(withTurns)
	if t.th == nil {
		return th
	}
	st := t.th.Settings()
	th.Model, th.ModelProvider, th.Cwd = optString(st.Model), st.ModelProvider, st.Cwd
	th.ReasoningEffort, th.Environments = optString(st.ReasoningEffort), ptr(environments(st))
	return th
}

func (s *Server) threadUnsubscribe(ctx context.Context, c *call, p appproto.ThreadIDParams) (appproto.ThreadUnsubscribeResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.ThreadUnsubscribeResponse{}, threadIDError(err)
	}
	t := s.thread(id)
	if t == nil {
		return appproto.ThreadUnsubscribeResponse{Status: "notLoaded"}, nil
	}
	var out outbox
	t.mu.Lock()
	ok := t.unsubscribeLocked(c.sess, &out)
	t.mu.Unlock()
	out.flush()
	if !ok {
		return appproto.ThreadUnsubscribeResponse{Status: "notSubscribed"}, nil
	}
	// The thread stays loaded, as in Codex 0.169, until it has been
	// idle with no subscriber for Config.IdleUnload (idle.go).
	return appproto.ThreadUnsubscribeResponse{Status: "unsubscribed"}, nil
}

func (s *Server) threadArchive(ctx context.Context, c *call, p appproto.ThreadIDParams) (appproto.EmptyResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.EmptyResponse{}, threadIDError(err)
	}
	noRollout := invalidRequest("no rollout found for thread id " + id)
	if t := s.thread(id); t != nil {
		t.mu.Lock()
		stored := !t.st.info.Ephemeral && t.st.info.Materialized
		t.mu.Unlock()
		if !stored {
			return appproto.EmptyResponse{}, noRollout
		}
		// An archived thread is unloaded first; its listener tells every
		// connection it is no longer loaded.
		t.shutdown()
	}
	if err := s.core.ArchiveThread(ctx, id); errors.Is(err, agent.ErrThreadNotFound) {
		return appproto.EmptyResponse{}, noRollout
	} else if err != nil {
		return appproto.EmptyResponse{}, coreError(err)
	}
	s.answerThenAll(c, appproto.EmptyResponse{}, newNote(appproto.ThreadArchived.Name(), appproto.ThreadIDNotification{ThreadID: id}))
	return appproto.EmptyResponse{}, errDeferred
}

func (s *Server) threadUnarchive(ctx context.Context, c *call, p appproto.ThreadIDParams) (appproto.ThreadUnarchiveResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.ThreadUnarchiveResponse{}, threadIDError(err)
	}
	info, err := s.core.UnarchiveThread(ctx, id)
	if errors.Is(err, agent.ErrThreadNotFound) {
		return appproto.ThreadUnarchiveResponse{}, invalidRequest("no archived rollout found for thread id " + id)
	} else if err != nil {
		return appproto.ThreadUnarchiveResponse{}, coreError(err)
	}
	resp := appproto.ThreadUnarchiveResponse{Thread: wireThread(info, appproto.ThreadStatus{Type: appproto.StatusNotLoaded}, nil, nil)}
	s.answerThenAll(c, resp, newNote(appproto.ThreadUnarchived.Name(), appproto.ThreadIDNotification{ThreadID: id}))
	return resp, errDeferred
}

func (s *Server) threadNameSet(ctx context.Context, c *call, p appproto.ThreadSetNameParams) (appproto.EmptyResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.EmptyResponse{}, threadIDError(err)
	}
	name := strings.TrimSpace(p.Name)
	if name == "" {
		return appproto.EmptyResponse{}, invalidRequest("thread name must not be empty")
	}
	if t := s.thread(id); t != nil {
		// A loaded thread's core reports the name as an event, which its
		// listener projects: the answer is sent under the thread's lock,
		// so that it precedes thread/name/updated.
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.st.unloaded {
			if err := s.core.SetThreadName(ctx, id, name); err != nil {
				return appproto.EmptyResponse{}, coreError(err)
			}
			c.respond(appproto.EmptyResponse{}, nil)
			return appproto.EmptyResponse{}, errDeferred
		}
	}
	if err := s.core.SetThreadName(ctx, id, name); errors.Is(err, agent.ErrThreadNotFound) {
		return appproto.EmptyResponse{}, invalidRequest("no rollout found for thread id " + id)
	} else if err != nil {
		return appproto.EmptyResponse{}, coreError(err)
	}
	// An unloaded thread has no listener: every connection is told here.
	s.answerThenAll(c, appproto.EmptyResponse{}, newNote(appproto.ThreadNameUpdated.Name(), appproto.ThreadNameUpdatedNotification{ThreadID: id, ThreadName: &name}))
	return appproto.EmptyResponse{}, errDeferred
}

func (s *Server) threadSettingsUpdate(ctx context.Context, c *call, p appproto.ThreadSettingsUpdateParams) (appproto.EmptyResponse, error) {
	id, err := appproto.ParseThreadID(p.ThreadID)
	if err != nil {
		return appproto.EmptyResponse{}, threadIDError(err)
	}
	t := s.thread(id)
	if t == nil {
		return appproto.EmptyResponse{}, invalidRequest("thread not found: " + id)
	}
	if p.Permissions != nil && p.SandboxPolicy != nil {
		return appproto.EmptyResponse{}, invalidRequest("`permissions` cannot be combined with `sandboxPolicy`")
	}
	o, err := s.overrides(overrideReq{model: p.Model, cwd: p.Cwd, reviewer: p.ApprovalsReviewer, approval: p.ApprovalPolicy,
		sandboxPolicy: p.SandboxPolicy, permissions: p.Permissions, personality: p.Personality, serviceTier: p.ServiceTier,
		effort: p.Effort, summary: p.Summary, collab: p.CollaborationMode})
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	if o.Environments, err = s.environmentsOverride(p.Environments); err != nil {
		return appproto.EmptyResponse{}, err
	}
	// The answer means "queued": thread/settings/updated follows once the
	// core has applied the settings. It is sent under the thread's lock, so
	// that the listener cannot project the core's SettingsUpdated before it.
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.unloaded {
		return appproto.EmptyResponse{}, invalidRequest("thread not found: " + id)
	}
	if _, err := t.th.Submit(ctx, agent.UpdateSettings{Overrides: o}); err != nil {
		return appproto.EmptyResponse{}, coreError(err)
	}
	c.respond(appproto.EmptyResponse{}, nil)
	return appproto.EmptyResponse{}, errDeferred
}

// coreError reports a failure of the core that no rule maps.
func coreError(err error) error {
	if isJSONRPCError(err) {
		return err
	}
	if errors.Is(err, agent.ErrThreadClosed) {
		return invalidRequest("thread is shut down")
	}
	return internalError(fmt.Sprintf("agent core: %v", err))
}
