package appserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// loadedThread resolves a thread id of a turn method: Codex's errors for a
// malformed id and for a thread that is not loaded (or no longer accepts
// input).
func (s *Server) loadedThread(raw string) (*thread, error) {
	id, err := appproto.ParseThreadID(raw)
	if err != nil {
		return nil, threadIDError(err)
	}
	t := s.thread(id)
	if t == nil {
		return nil, invalidRequest("thread not found: " + id)
	}
	return t, nil
}

// inputTooLarge is the -32602 error for input over the limit; its data
// names the limit.
func inputTooLarge(actual int) error {
	data, _ := json.Marshal(appproto.InputTooLargeData{InputErrorCode: "input_too_large",
		MaxChars: appproto.MaxInputChars, ActualChars: actual})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Data: data,
		Message: fmt.Sprintf("Input exceeds the maximum length of %d characters.", appproto.MaxInputChars)}
}

// turnStart validates everything before it touches anything, then submits
// the input and answers at once: the answer means "accepted".
func (s *Server) turnStart(ctx context.Context, c *call, p appproto.TurnStartParams) (appproto.TurnStartResponse, error) {
	if err := checkRequestRoots(p.RuntimeWorkspaceRoots); err != nil {
		return appproto.TurnStartResponse{}, err
	}
	t, err := s.loadedThread(p.ThreadID)
	if err != nil {
		return appproto.TurnStartResponse{}, err
	}
	if n := inputChars(p.Input); n > appproto.MaxInputChars {
		return appproto.TurnStartResponse{}, inputTooLarge(n)
	}
	if err := remoteImage(p.Input); err != nil {
		return appproto.TurnStartResponse{}, err
	}
	if p.Permissions != nil && p.SandboxPolicy != nil {
		return appproto.TurnStartResponse{}, invalidRequest("`permissions` cannot be combined with `sandboxPolicy`")
	}
	o, err := s.overrides(overrideReq{model: p.Model, cwd: p.Cwd, reviewer: p.ApprovalsReviewer, approval: p.ApprovalPolicy,
		sandboxPolicy: p.SandboxPolicy, permissions: p.Permissions, personality: p.Personality, serviceTier: p.ServiceTier,
		effort: p.Effort, summary: p.Summary, collab: p.CollaborationMode})
	if err != nil {
		return appproto.TurnStartResponse{}, err
	}
	if o.Environments, err = s.environmentsOverride(p.Environments); err != nil {
		return appproto.TurnStartResponse{}, err
	}
	if p.RuntimeWorkspaceRoots != nil {
		o.RuntimeWorkspaceRoots = &p.RuntimeWorkspaceRoots
	}
	in := agent.UserInput{Input: agentInputs(p.Input), ClientID: deref(p.ClientUserMessageID), Overrides: o}
	if p.OutputSchema != nil && string(p.OutputSchema) != "null" {
		in.OutputSchema = p.OutputSchema
	}
	if err := localImages(ctx, t, in); err != nil {
		return appproto.TurnStartResponse{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.st.unloaded {
		return appproto.TurnStartResponse{}, invalidRequest("thread not found: " + t.id)
	}
	// Under the lock, so that the answer precedes turn/started.
	turnID, err := t.th.Submit(ctx, in)
	switch {
	case errors.Is(err, agent.ErrEmptyInput):
		return appproto.TurnStartResponse{}, internalError("failed to submit turn input: EmptyInput")
	case errors.Is(err, agent.ErrThreadClosed):
		return appproto.TurnStartResponse{}, invalidRequest("thread not found: " + t.id)
	case errors.As(err, new(*agent.NotSteerableError)):
		// A review or compaction runs: Codex refuses the input so.
		return appproto.TurnStartResponse{}, internalError("failed to submit turn input: " + notSteerableDebug(asNotSteerable(err)))
	case err != nil:
		return appproto.TurnStartResponse{}, internalError("failed to submit turn input: " + err.Error())
	}
	t.noteActivityLocked() // its TurnStarted may not have reached the listener yet
	t.noteEnvironmentsLocked(o)
	resp := appproto.TurnStartResponse{Turn: appproto.Turn{ID: turnID, RootTurnID: ptr(turnID), Items: []appproto.ThreadItem{},
		ItemsView: appproto.ItemsNotLoaded, Status: appproto.TurnInProgress}}
	c.respond(resp, nil)
	return resp, errDeferred
}

// turnSteer appends input to the active turn; the core checks the turn
// atomically.
func (s *Server) turnSteer(ctx context.Context, c *call, p appproto.TurnSteerParams) (appproto.TurnSteerResponse, error) {
	t, err := s.loadedThread(p.ThreadID)
	if err != nil {
		return appproto.TurnSteerResponse{}, err
	}
	if p.ExpectedTurnID == "" {
		return appproto.TurnSteerResponse{}, invalidRequest("expectedTurnId must not be empty")
	}
	if n := inputChars(p.Input); n > appproto.MaxInputChars {
		return appproto.TurnSteerResponse{}, inputTooLarge(n)
	}
	if err := remoteImage(p.Input); err != nil {
		return appproto.TurnSteerResponse{}, err
	}
	steer := agent.Steer{ExpectedTurnID: p.ExpectedTurnID, Input: agentInputs(p.Input), ClientID: deref(p.ClientUserMessageID)}
	if err := localImages(ctx, t, steer); err != nil {
		return appproto.TurnSteerResponse{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	turnID, err := t.th.Submit(ctx, steer)
	var mismatch *agent.TurnMismatchError
	var notSteerable *agent.NotSteerableError
	switch {
	case err == nil:
	case errors.Is(err, agent.ErrEmptyInput):
		return appproto.TurnSteerResponse{}, invalidRequest("input must not be empty")
	case errors.Is(err, agent.ErrNoActiveTurn), errors.Is(err, agent.ErrThreadClosed):
		return appproto.TurnSteerResponse{}, invalidRequest("no active turn to steer")
	case errors.As(err, &mismatch):
		return appproto.TurnSteerResponse{}, invalidRequest(fmt.Sprintf("expected active turn id `%s` but found `%s`", mismatch.Expected, mismatch.Active))
	case errors.As(err, &notSteerable):
		// The data is a TurnError naming the kind of turn.
		info, _ := json.Marshal(map[string]any{"activeTurnNotSteerable": map[string]string{"turnKind": notSteerable.TurnKind}})
		data, _ := json.Marshal(appproto.TurnError{Message: notSteerable.Error(), CodexErrorInfo: info})
		return appproto.TurnSteerResponse{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: notSteerable.Error(), Data: data}
	default:
		return appproto.TurnSteerResponse{}, internalError("failed to steer turn: " + err.Error())
	}
	resp := appproto.TurnSteerResponse{TurnID: turnID}
	c.respond(resp, nil)
	return resp, errDeferred
}

// turnInterrupt defers its answer until the core reports the turn ended:
// the answer then precedes turn/completed {status:"interrupted"}. The core
// decides whether the turn is the active one (the listener may not have
// seen a turn that was just started, or that just ended).
//
// An empty turnId is Codex's start-up interrupt: it names no turn, so no
// turn end can answer it; it is answered {} once submitted, whether or not
// a turn was running (Codex 0.169 answers {} on an idle thread too).
func (s *Server) turnInterrupt(ctx context.Context, c *call, p appproto.TurnInterruptParams) (appproto.EmptyResponse, error) {
	t, err := s.loadedThread(p.ThreadID)
	if err != nil {
		return appproto.EmptyResponse{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.TurnID == "" {
		_, err := t.th.Submit(ctx, agent.Interrupt{})
		switch {
		case err == nil, errors.Is(err, agent.ErrNoActiveTurn):
		case errors.Is(err, agent.ErrThreadClosed):
			return appproto.EmptyResponse{}, invalidRequest("thread not found: " + t.id)
		default:
			return appproto.EmptyResponse{}, internalError("failed to interrupt startup: " + err.Error())
		}
		// Under the lock, so that it precedes the turn's turn/completed.
		c.respond(appproto.EmptyResponse{}, nil)
		return appproto.EmptyResponse{}, errDeferred
	}
	// Recorded before submitting, removed if submitting fails: the
	// listener cannot see the turn end in between, as it needs mu.
	t.st.interrupts = append(t.st.interrupts, pendingInterrupt{call: c, turnID: p.TurnID})
	_, err = t.th.Submit(ctx, agent.Interrupt{TurnID: p.TurnID})
	if err == nil {
		return appproto.EmptyResponse{}, errDeferred
	}
	if errors.Is(err, agent.ErrNoActiveTurn) && t.st.active != nil && t.st.active.id == p.TurnID {
		// The turn ended in the core and its TurnCompleted is on its way to
		// the listener, which answers this request with it.
		return appproto.EmptyResponse{}, errDeferred
	}
	t.st.interrupts = t.st.interrupts[:len(t.st.interrupts)-1]
	var mismatch *agent.TurnMismatchError
	switch {
	case errors.Is(err, agent.ErrNoActiveTurn), errors.Is(err, agent.ErrThreadClosed):
		return appproto.EmptyResponse{}, invalidRequest("no active turn to interrupt")
	case errors.As(err, &mismatch):
		return appproto.EmptyResponse{}, invalidRequest(fmt.Sprintf("expected active turn id %s but found %s", mismatch.Expected, mismatch.Active))
	}
	return appproto.EmptyResponse{}, internalError("failed to interrupt turn: " + err.Error())
}
