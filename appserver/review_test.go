package appserver

import (
	"context"
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/core/prompt"
)

// reviewModel answers a review request with findings, after its gate.
type reviewModel struct {
	echoModel
	gate chan struct{}
}

const reviewFindings = `{"findings":[{"title":"[P1] Bug","body":"Explained.","confidence_score":0.9,"priority":1,"code_location":{"absolute_file_path":"/w/x.go","line_range":{"start":5,"end":6}}}],"overall_correctness":"patch is incorrect","overall_explanation":"One bug.","overall_confidence_score":0.8}`

func (m *reviewModel) Stream(ctx context.Context, req *prompt.Request, onRetry func(prompt.Event)) (prompt.Stream, error) {
	if !strings.Contains(req.Input[0].Text(), "overall_correctness") {
		return m.echoModel.Stream(ctx, req, onRetry)
	}
	select {
	case <-m.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	done := prompt.Message("assistant", reviewFindings)
	done.ID = "msg_review"
	return &eventStream{events: []prompt.Event{{Kind: prompt.Created}, {Kind: prompt.ItemDone, Item: &done},
		{Kind: prompt.Completed, Usage: &prompt.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}}}}, nil
}

func TestReviewStart(t *testing.T) {
	m := &reviewModel{gate: make(chan struct{})}
	r := newCompactEnv(t, m)
	c := r.dial("reviewer")
	c.initialize(nil)
	id := c.startThread(nil)
	res := c.call(appproto.MethodReviewStart, map[string]any{"threadId": id, "delivery": "inline",
		"target": map[string]any{"type": "baseBranch", "branch": " main "}})
	turnID := res.str(t, "/turn/id")
	// Codex's answer: the hint as the turn's user message, with the turn's
	// id, and a null rootTurnId.
	if res.str(t, "/reviewThreadId") != id || res.str(t, "/turn/status") != "inProgress" ||
		res.str(t, "/turn/items/0/content/0/text") != "changes against 'main'" || res.str(t, "/turn/items/0/id") != turnID ||
		!strings.Contains(string(res.Result), `"rootTurnId":null`) {
		t.Fatalf("answer %s", res)
	}
	entered := c.next("enteredReviewMode", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"enteredReviewMode"`)
	})
	if entered.str(t, "/item/review") != "changes against 'main'" || entered.str(t, "/turnId") != turnID {
		t.Fatalf("entered %s", entered)
	}
	e := c.callErr(appproto.MethodTurnSteer, map[string]any{"threadId": id, "expectedTurnId": turnID, "input": text("x")})
	if e.Code != -32600 || e.Message != "cannot steer a review turn" || !strings.Contains(string(e.Data), `"turnKind":"review"`) {
		t.Fatalf("steer %+v %s", e, e.Data)
	}
	e = c.callErr(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("x")})
	if e.Code != -32603 || e.Message != "failed to submit turn input: ActiveTurnNotSteerable { turn_kind: Review }" {
		t.Fatalf("turn/start %+v", e)
	}
	close(m.gate)
	exited := c.next("exitedReviewMode", func(m *wmsg) bool {
		return m.Method == "item/completed" && strings.Contains(string(m.Params), `"type":"exitedReviewMode"`)
	})
	if got := exited.str(t, "/item/review"); got != "One bug.\n\nReview comment:\n\n- [P1] Bug — /w/x.go:5-6\n  Explained." {
		t.Fatalf("exited review %q", got)
	}
	if tc := c.note("turn/completed"); tc.str(t, "/turn/status") != "completed" {
		t.Fatalf("completed %s", tc)
	}
}

func TestReviewStartErrors(t *testing.T) {
	r := newCompactEnv(t, &reviewModel{gate: make(chan struct{})})
	c := r.dial("reviewer")
	c.initialize(nil)
	id := c.startThread(nil)
	for _, tc := range []struct {
		params map[string]any
		code   int64
		msg    string
	}{
		{map[string]any{"threadId": id, "target": map[string]any{"type": "baseBranch", "branch": "  "}}, -32600, "branch must not be empty"},
		{map[string]any{"threadId": id, "target": map[string]any{"type": "commit", "sha": ""}}, -32600, "sha must not be empty"},
		{map[string]any{"threadId": id, "target": map[string]any{"type": "custom", "instructions": "\n"}}, -32600, "instructions must not be empty"},
		{map[string]any{"threadId": id}, -32600, "missing field `target`"},
		{map[string]any{"threadId": id, "target": map[string]any{"type": "everything"}}, -32600, "unknown variant `everything`"},
		{map[string]any{"threadId": id, "delivery": "detached", "target": map[string]any{"type": "uncommittedChanges"}}, -32600, "unknown variant `detached`"},
		{map[string]any{"threadId": "x", "target": map[string]any{"type": "uncommittedChanges"}}, -32600, "invalid thread id: "},
	} {
		e := c.callErr(appproto.MethodReviewStart, tc.params)
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%v: %+v, want %d %q", tc.params, e, tc.code, tc.msg)
		}
	}
}
