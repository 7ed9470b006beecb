package appserver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/codexd/codexd/appproto"
)

// implementedFeatures are the [features] flags of Codex 0.169 whose
// behaviour codexd has, in Codex's order, with Codex's stage and default.
// codexd always has them on: it does not read [features] to turn them off.
var implementedFeatures = []appproto.ExperimentalFeature{
	{Name: "shell_tool", Stage: "stable", Enabled: true, DefaultEnabled: true},
	{Name: "view_image", Stage: "stable", Enabled: true, DefaultEnabled: true},
	{Name: "unified_exec", Stage: "stable", Enabled: true, DefaultEnabled: true},
	{Name: "unified_exec_tty", Stage: "stable", Enabled: true, DefaultEnabled: true},
}

func registerFeatures(s *Server) {
	register(s, appproto.ExperimentalFeatureList, s.experimentalFeatureList)
	register(s, appproto.ExperimentalFeatureEnablementSet, s.experimentalFeatureEnablementSet)
}

// experimentalFeatureList pages through implementedFeatures as Codex
// pages its flags: the cursor is an offset, a page holds at least one.
func (s *Server) experimentalFeatureList(ctx context.Context, c *call, p appproto.ExperimentalFeatureListParams) (appproto.ExperimentalFeatureListResponse, error) {
	var none appproto.ExperimentalFeatureListResponse
	if p.ThreadID != nil {
		if _, err := s.loadedThread(*p.ThreadID); err != nil {
			return none, err
		}
	}
	total := len(implementedFeatures)
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return none, invalidRequest("invalid cursor: " + *p.Cursor)
		}
		if n > total {
			return none, invalidRequest(fmt.Sprintf("cursor %d exceeds total feature flags %d", n, total))
		}
		start = n
	}
	end := total
	if p.Limit != nil {
		end = min(start+max(int(*p.Limit), 1), total)
	}
	resp := appproto.ExperimentalFeatureListResponse{Data: append([]appproto.ExperimentalFeature{}, implementedFeatures[start:end]...)}
	if end < total {
		resp.NextCursor = ptr(strconv.Itoa(end))
	}
	return resp, nil
}

// experimentalFeatureEnablementSet changes nothing and says so, as Codex
// 0.169 answers {"enablement":{}} whatever it is asked.
func (s *Server) experimentalFeatureEnablementSet(ctx context.Context, c *call, p appproto.ExperimentalFeatureEnablementSetParams) (appproto.ExperimentalFeatureEnablementSetResponse, error) {
	return appproto.ExperimentalFeatureEnablementSetResponse{Enablement: map[string]bool{}}, nil
}
