package appserver

import (
	"context"
	"errors"
	"fmt"
	"time"

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
