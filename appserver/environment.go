package appserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/environment"
)

// The environment methods manage the exec-servers threads run their tools
// on (package environment holds them); they are experimental in Codex
// 0.169, and answer as it does.

func (s *Server) registerEnvironments() {
	register(s, appproto.EnvironmentAdd, s.environmentAdd)
	register(s, appproto.EnvironmentStatus, s.environmentStatus)
	register(s, appproto.EnvironmentInfo, s.environmentInfo)
}

// environmentAdd registers (or replaces) a remote exec-server and starts
// connecting to it at once, as Codex does; a URL that cannot be dialled is
// accepted and shows in environment/status.
func (s *Server) environmentAdd(_ context.Context, _ *call, p appproto.EnvironmentAddParams) (appproto.EmptyResponse, error) {
	ap := environment.AddParams{ID: p.EnvironmentID, URL: p.ExecServerURL}
	if p.AuthBearerToken != nil {
		ap.BearerToken = *p.AuthBearerToken
	}
	if p.ConnectTimeoutMs != nil && *p.ConnectTimeoutMs > 0 {
		ap.ConnectTimeout = time.Duration(min(*p.ConnectTimeoutMs, uint64(24*time.Hour/time.Millisecond))) * time.Millisecond
	}
	if err := s.envs.Add(ap); err != nil {
		return appproto.EmptyResponse{}, invalidRequest("exec-server protocol error: " + err.Error())
	}
	s.envs.Start(p.EnvironmentID)
	return appproto.EmptyResponse{}, nil
}

// environmentStatus reports the connection as it stands: it never dials.
func (s *Server) environmentStatus(_ context.Context, _ *call, p appproto.EnvironmentStatusParams) (appproto.EnvironmentStatusResponse, error) {
	st, detail := s.envs.StatusOf(p.EnvironmentID)
	r := appproto.EnvironmentStatusResponse{Status: string(st)}
	if detail != "" {
		r.Error = &detail
	}
	return r, nil
}

// environmentInfo reports the exec-server's default cwd and shell,
// connecting if needed.
func (s *Server) environmentInfo(ctx context.Context, _ *call, p appproto.EnvironmentInfoParams) (appproto.EnvironmentInfoResponse, error) {
	info, err := s.envs.Info(ctx, p.EnvironmentID)
	switch {
	case errors.Is(err, environment.ErrUnknown):
		return appproto.EnvironmentInfoResponse{}, invalidRequest(err.Error())
	case err != nil:
		return appproto.EnvironmentInfoResponse{}, internalError(fmt.Sprintf("failed to get info for environment `%s`: %v", p.EnvironmentID, err))
	}
	r := appproto.EnvironmentInfoResponse{Shell: appproto.EnvironmentShellInfo{Name: info.Shell.Name, Path: info.Shell.Path}}
	if info.Cwd != "" {
		r.Cwd = &info.Cwd
	}
	return r, nil
}

// environmentsOverride reads the environments member of thread/start or
// turn/start: absent or null keeps the thread's (nil), [] selects none,
// otherwise the first is the turn's current environment. It refuses, as
// Codex 0.169 does, in its order and before anything is recorded: a cwd
// or root that is not absolute (environmentPaths, over all of them), then
// for each environment a cwd past Codex's size, a repeated id and an
// unknown one; then, as Codex does not, a cwd outside the environment's
// runtime workspace roots (checkEnvironmentCwd).
func (s *Server) environmentsOverride(raw jsontext.Value) (*[]agent.Environment, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ps []appproto.TurnEnvironmentParams
	if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, invalidRequest("Invalid request: " + err.Error())
	}
	envs, err := environmentPaths(ps)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range envs {
		if len(e.Cwd) > maxEnvCwdBytes {
			return nil, invalidRequest("turn environment working directory exceeds the maximum size")
		}
		if seen[e.ID] {
			return nil, invalidRequest(fmt.Sprintf("duplicate turn environment id `%s`", e.ID))
		}
		seen[e.ID] = true
		if !s.hasEnvironment(e.ID) {
			return nil, invalidRequest(fmt.Sprintf("unknown turn environment id `%s`", e.ID))
		}
	}
	for i, e := range envs {
		if err := checkEnvironmentCwd(e, ps[i].Cwd); err != nil {
			return nil, err
		}
	}
	return &envs, nil
}

// hasEnvironment: without a registry of its own the server knows `local`
// only (the core's exec-server).
func (s *Server) hasEnvironment(id string) bool {
	return s.envs.Has(id) || (s.ownEnvs && id == environment.LocalID)
}

// environments is what a loaded thread reports: its environments, or
// `local` with the thread's cwd and workspace roots when it named none.
func environments(st agent.Settings) []appproto.ThreadEnvironment {
	if st.Environments == nil {
		return []appproto.ThreadEnvironment{{EnvironmentID: environment.LocalID, Cwd: st.Cwd, RuntimeWorkspaceRoots: agent.WorkspaceRoots(st)}}
	}
	out := make([]appproto.ThreadEnvironment, 0, len(st.Environments))
	for _, e := range st.Environments {
		roots := e.RuntimeWorkspaceRoots
		if roots == nil { // kept before roots were: the cwd
			roots = []string{e.Cwd}
		}
		out = append(out, appproto.ThreadEnvironment{EnvironmentID: e.ID, Cwd: e.Cwd, RuntimeWorkspaceRoots: roots})
	}
	return out
}

// runtimeRoots are the runtime workspace roots a thread/start answer
// reports: the current environment's POSIX ones, cleaned, as Codex 0.169
// lists them (none without an environment).
func runtimeRoots(st agent.Settings) []string {
	if envs := environments(st); len(envs) > 0 {
		return posixRoots(envs[0].RuntimeWorkspaceRoots)
	}
	return []string{}
}

// checkRequestRoots refuses a request's runtimeWorkspaceRoots with a
// root that is not absolute, as Codex 0.169 fails to deserialize it,
// before anything else of the request is checked.
func checkRequestRoots(roots []string) error {
	for _, r := range roots {
		if !path.IsAbs(r) {
			return invalidRequest("Invalid request: AbsolutePathBuf deserialized without a base path")
		}
	}
	return nil
}

// noteEnvironmentsLocked keeps what thread/read and thread/list report in
// step with a turn/start that switched environments (the core applies the
// switch with the turn and announces no settings change for it).
func (t *thread) noteEnvironmentsLocked(o agent.Overrides) {
	if o.Environments != nil {
		t.st.settings.Environments = append([]agent.Environment{}, (*o.Environments)...)
	}
}

// startSandbox is the sandbox a thread/start answer reports. Under
// workspace-write Codex 0.169 lists what is writable besides the thread's
// cwd: when the cwd is one of the current environment's runtime workspace
// roots (always, for a thread that names no environment: its roots are
// the cwd and the configured writable roots), the other roots and then
// the configured writable roots, each once; otherwise the environment's
// roots, /tmp and $TMPDIR (unless excluded), as codexd's sandbox also
// allows them, and then the configured writable roots.
func startSandbox(st agent.Settings) appproto.SandboxPolicy {
	sb := wireSandbox(st.Sandbox)
	if st.Sandbox.Mode != agent.SandboxWorkspaceWrite {
		return sb
	}
	envRoots := runtimeRoots(st)
	if cwd := path.Clean(st.Cwd); slices.Contains(envRoots, cwd) {
		out := []string{}
		for _, r := range append(envRoots, st.Sandbox.WritableRoots...) {
			if r = path.Clean(r); r != cwd && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		sb.WritableRoots = out
		return sb
	}
	roots := append([]string{}, envRoots...)
	if !st.Sandbox.ExcludeSlashTmp {
		roots = append(roots, "/tmp")
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" && !st.Sandbox.ExcludeTmpdirEnvVar {
		roots = append(roots, tmp)
	}
	sb.WritableRoots = slices.Compact(append(roots, st.Sandbox.WritableRoots...))
	return sb
}

// envEvents hands the registry's connection events to one short-lived
// drainer at a time: the registry's callback must not block (it runs on
// the exec-server client's own goroutine, and a client that reads slowly
// may hold a notification back), and the events keep their order.
type envEvents struct {
	mu      sync.Mutex
	queue   []environment.Event
	running bool
	wg      sync.WaitGroup
}

// environmentEventAsync queues ev for environmentEvent.
func (s *Server) environmentEventAsync(ev environment.Event) {
	q := &s.envQueue
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, ev)
	if q.running {
		return
	}
	q.running = true
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		for {
			q.mu.Lock()
			if len(q.queue) == 0 {
				q.running = false
				q.mu.Unlock()
				return
			}
			ev := q.queue[0]
			q.queue = q.queue[1:]
			q.mu.Unlock()
			s.environmentEvent(ev)
		}
	}()
}

// environmentEvent tells the subscribers of every loaded thread whose
// current environment dropped (thread/environment/disconnected) or had its
// session resumed (thread/environment/connected).
func (s *Server) environmentEvent(ev environment.Event) {
	method := appproto.MethodThreadEnvironmentDisconnected
	if ev.Connected {
		method = appproto.MethodThreadEnvironmentConnected
	}
	s.mu.Lock()
	threads := make([]*thread, 0, len(s.threads))
	for _, t := range s.threads {
		threads = append(threads, t)
	}
	s.mu.Unlock()
	for _, t := range threads {
		var out outbox
		t.mu.Lock()
		if !t.st.unloaded && currentEnvironment(t.st.settings) == ev.ID {
			t.toSubscribersLocked(&out, method, appproto.EnvironmentConnectionNotification{EnvironmentID: ev.ID, ThreadID: t.id})
		}
		t.mu.Unlock()
		out.flush()
	}
}

// currentEnvironment is the id of the environment a thread's tools run
// on ("" for none).
func currentEnvironment(st agent.Settings) string {
	switch {
	case st.Environments == nil:
		return environment.LocalID
	case len(st.Environments) == 0:
		return ""
	}
	return st.Environments[0].ID
}
