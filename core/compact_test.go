package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/prompt"
)

// summaryModel answers a summarisation request (its last input is the
// compaction prompt) with a summary, and anything else with "ok"; when
// window is set it refuses, as a real model does, a request whose size
// times factor passes it.
func summaryModel(window int64, factor int64) *fakeModel {
	m := newFakeModel()
	m.next = func(req *prompt.Request) fakeResponse {
		if window > 0 && compaction.RequestTokens(req)*factor > window {
			return fakeResponse{startErr: &prompt.Error{Message: "Your input exceeds the context window of this model.", Info: "contextWindowExceeded"}}
		}
		if isSummaryRequest(req) {
			return textResponse("msg_sum", "SUMMARY-OF-WORK")
		}
		return textResponse("msg_ok", "ok")
	}
	return m
}

func isSummaryRequest(req *prompt.Request) bool {
	n := len(req.Input)
	return n > 0 && req.Input[n-1].Text() == compaction.DefaultPrompt
}

func withWindow(w int64) func(*Config) {
	return func(c *Config) { c.Compaction.ContextWindow = w }
}

// big is a user message of about n tokens.
func big(tag string, n int) string { return tag + " " + strings.Repeat("x", 4*n) }

func drainRequests(m *fakeModel) []*prompt.Request {
	var out []*prompt.Request
	for {
		select {
		case r := <-m.reqs:
			out = append(out, r)
		default:
			return out
		}
	}
}

func TestAutoCompactKeepsEveryRequestUnderTheWindow(t *testing.T) {
	const window = 24_000
	m := summaryModel(window, 1)
	h := newHarness(t, m, withWindow(window))
	th := h.start(agent.Overrides{})
	compactions := 0
	for i := range 12 {
		h.submit(th, agent.UserInput{Input: text(big("turn"+string(rune('A'+i)), 3000))})
		evs := until(t, th, isTurnCompleted)
		done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
		if done.Status != agent.TurnStatusCompleted {
			t.Fatalf("turn %d: %+v\n%s", i, done, describe(evs))
		}
		compactions += len(itemsCompleted[*agent.ContextCompaction](evs))
		for _, tc := range msgs[agent.TokenCount](evs) {
			if tc.Info.ModelContextWindow != window*95/100 {
				t.Fatalf("token count window %d, want 95%% of %d", tc.Info.ModelContextWindow, window)
			}
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction in twelve turns of 3,000 tokens at a 24,000-token window")
	}
	threshold := compaction.Threshold(window, 0)
	for i, r := range drainRequests(m) {
		if n := compaction.RequestTokens(r); n > threshold {
			t.Errorf("request %d: %d tokens, over the %d-token trigger", i, n, threshold)
		}
	}
	// After a compaction the history is the recent user messages and the
	// summary.
	hist := h.core.loaded(th.ID()).historySnapshot()
	found := false
	for _, it := range hist {
		if strings.Contains(it.Text(), "SUMMARY-OF-WORK") && compaction.IsSummary(it.Text()) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no summary in the history: %d items", len(hist))
	}
}

// The trigger is a fixed point of the request: with the same turns, the
// compaction happens before the same request every time.
func TestAutoCompactTriggerIsStable(t *testing.T) {
	const window = 24_000
	run := func() int {
		m := summaryModel(window, 1)
		h := newHarness(t, m, withWindow(window))
		th := h.start(agent.Overrides{})
		for i := range 8 {
			h.submit(th, agent.UserInput{Input: text(big("t", 2500))})
			evs := until(t, th, isTurnCompleted)
			if len(itemsCompleted[*agent.ContextCompaction](evs)) > 0 {
				return i
			}
		}
		return -1
	}
	first, second := run(), run()
	if first < 0 || first != second {
		t.Fatalf("compacted at turn %d, then at turn %d", first, second)
	}
	// The request that triggered it was at most the threshold plus one
	// turn's addition, and the threshold leaves a step's headroom.
	if th := compaction.Threshold(window, 0); th > window-compaction.MaxTurnAddition/2 {
		t.Fatalf("threshold %d leaves no headroom below %d", th, window)
	}
}

// A model that counts twice the estimate refuses the request: the turn
// compacts (the summary request is cut until the model takes it) and asks
// again, instead of failing.
func TestContextExceededCompactsAndRetries(t *testing.T) {
	const window = 40_000
	m := summaryModel(window, 2)
	h := newHarness(t, m, withWindow(window))
	th := h.start(agent.Overrides{})
	var evs []agent.Event
	for i := range 12 {
		h.submit(th, agent.UserInput{Input: text(big("u"+string(rune('a'+i)), 3000))})
		evs = until(t, th, isTurnCompleted)
		done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
		if done.Status != agent.TurnStatusCompleted {
			t.Fatalf("turn %d failed: %+v", i, done.Error)
		}
		if len(itemsCompleted[*agent.ContextCompaction](evs)) > 0 {
			break
		}
	}
	if len(itemsCompleted[*agent.ContextCompaction](evs)) == 0 {
		t.Fatal("the refused request did not compact")
	}
	if errs := msgs[agent.Error](evs); len(errs) != 0 {
		t.Fatalf("errors shown: %+v", errs)
	}
	var last *prompt.Request
	for _, r := range drainRequests(m) {
		last = r
	}
	if last == nil || isSummaryRequest(last) || !strings.Contains(last.Input[len(last.Input)-1].Text(), "SUMMARY-OF-WORK") {
		t.Fatalf("the retried request does not carry the summary")
	}
}

func TestSummaryRequestNeverPassesTheWindow(t *testing.T) {
	// A history far over the window: every summarisation request sent fits.
	var hist []prompt.Item
	for i := range 40 {
		hist = append(hist, prompt.Message("user", big("m", 2000)))
		hist = append(hist, prompt.Message("assistant", "answer "+string(rune('a'+i%26))))
	}
	budget := compaction.Budget(16_000)
	in, dropped := compaction.SummaryInput(hist, compaction.DefaultPrompt, budget)
	if dropped == 0 || compaction.Tokens(in) > budget {
		t.Fatalf("dropped %d, %d tokens for a budget of %d", dropped, compaction.Tokens(in), budget)
	}
	if in[len(in)-1].Text() != compaction.DefaultPrompt {
		t.Fatal("the prompt is not last")
	}
	// One item alone over the budget is cut to fit.
	in, _ = compaction.SummaryInput([]prompt.Item{prompt.Message("user", big("huge", 50_000))}, "p", budget)
	if compaction.Tokens(in) > budget || len(in) != 2 {
		t.Fatalf("%d items, %d tokens", len(in), compaction.Tokens(in))
	}
}

func TestManualCompactTurn(t *testing.T) {
	gate := make(chan struct{})
	m := newFakeModel(textResponse("msg_1", "first"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("hello")})
	until(t, th, isTurnCompleted)
	m.add(fakeResponse{gate: gate, events: append(textEvents("msg_s", "THE SUMMARY"), completed(100, 10))})

	id := h.submit(th, agent.Compact{})
	started := until(t, th, func(ev agent.Event) bool { _, ok := ev.Msg.(agent.ItemStarted); return ok })
	ts := msgs[agent.TurnStarted](started)
	if len(ts) != 1 || ts[0].Kind != "compact" || started[0].TurnID != id {
		t.Fatalf("started %s", describe(started))
	}
	// While it runs: no steering, and no new input joins it.
	var ns *agent.NotSteerableError
	if _, err := th.Submit(t.Context(), agent.Steer{ExpectedTurnID: id, Input: text("more")}); !errors.As(err, &ns) || ns.TurnKind != "compact" {
		t.Fatalf("steer: %v", err)
	}
	if _, err := th.Submit(t.Context(), agent.UserInput{Input: text("more")}); !errors.As(err, &ns) || ns.Error() != "cannot steer a compact turn" {
		t.Fatalf("user input: %v", err)
	}
	close(gate)
	evs := until(t, th, isTurnCompleted)
	var kinds []string
	for _, ev := range evs {
		switch ev.Msg.(type) {
		case agent.ItemCompleted, agent.TokenCount, agent.Warning, agent.TurnCompleted:
			kinds = append(kinds, describeEvent(ev))
		}
	}
	// As Codex 0.169: the usage, the item's end, the turn's end; no warning.
	if len(kinds) != 3 || !strings.Contains(kinds[0], "TokenCount") || !strings.Contains(kinds[1], "ContextCompaction") || evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted {
		t.Fatalf("events %v", kinds)
	}
	// The summary request carried the conversation and our prompt, and no
	// tools; no agent message was shown.
	m.request(t)
	req := m.request(t)
	if !isSummaryRequest(req) || len(req.Tools) != 0 || len(itemsCompleted[*agent.AgentMessage](evs)) != 0 {
		t.Fatalf("summary request %+v", req.Input)
	}
	// The compacted history starts with the thread's context, as Codex's.
	hist := h.core.loaded(th.ID()).historySnapshot()
	if len(hist) < 2 || !isContextMessage(hist[0]) {
		t.Fatalf("history does not start with the context: %+v", hist)
	}
	for len(hist) > 0 && isContextMessage(hist[0]) {
		hist = hist[1:]
	}
	if len(hist) != 2 || hist[0].Text() != "hello" || hist[1].Text() != compaction.SummaryPrefix+"\nTHE SUMMARY" {
		t.Fatalf("history %+v", hist)
	}
	// The usage now reports the rebuilt history's size: what the next
	// request costs, less the new message.
	tc := msgs[agent.TokenCount](evs)[0]
	m.add(textResponse("msg_3", "after"))
	h.submit(th, agent.UserInput{Input: text("next")})
	evs = until(t, th, isTurnCompleted)
	if evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted {
		t.Fatal(describe(evs))
	}
	next := compaction.RequestTokens(m.request(t)) - compaction.ItemTokens(prompt.Message("user", "next"))
	if tc.Info.Last.Total != next || tc.Info.Last.Input != next || tc.Info.Total.Total != 15+110 {
		t.Fatalf("usage after compaction %+v, want last %d", tc.Info, next)
	}
}

// Compacting while a turn runs interrupts it, then compacts.
func TestCompactInterruptsRunningTurn(t *testing.T) {
	m := newFakeModel(fakeResponse{hang: true}, textResponse("msg_s", "S"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{})
	first := h.submit(th, agent.UserInput{Input: text("long task")})
	m.request(t)
	second := h.submit(th, agent.Compact{})
	evs := until(t, th, isTurnCompleted)
	if done := evs[len(evs)-1]; done.TurnID != first || done.Msg.(agent.TurnCompleted).Status != agent.TurnStatusInterrupted {
		t.Fatalf("first turn %s", describe(evs))
	}
	evs = until(t, th, isTurnCompleted)
	if done := evs[len(evs)-1]; done.TurnID != second || done.Msg.(agent.TurnCompleted).Status != agent.TurnStatusCompleted ||
		len(itemsCompleted[*agent.ContextCompaction](evs)) != 1 {
		t.Fatalf("compaction turn %s", describe(evs))
	}
}

func TestCompactionSurvivesResume(t *testing.T) {
	home := t.TempDir()
	const window = 50_000
	m := newFakeModel(textResponse("msg_1", "one"), textResponse("msg_2", "two"), textResponse("msg_s", "RESUMED SUMMARY"))
	h := newHarness(t, m, func(c *Config) { withStore(home)(c); withWindow(window)(c) })
	l, err := h.core.StartThread(t.Context(), agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	th := l.Thread
	h.submit(th, agent.UserInput{Input: text("first question")})
	until(t, th, isTurnCompleted)
	h.submit(th, agent.UserInput{Input: text("second question")})
	until(t, th, isTurnCompleted)
	h.submit(th, agent.Compact{})
	until(t, th, isTurnCompleted)
	id := th.ID()
	if err := h.core.Close(); err != nil {
		t.Fatal(err)
	}

	m2 := newFakeModel(textResponse("msg_3", "three"))
	h2 := newHarness(t, m2, func(c *Config) { withStore(home)(c); withWindow(window)(c) })
	// thread/read still shows every turn.
	_, turns, err := h2.core.ReadThread(t.Context(), id, true)
	if err != nil || len(turns) != 3 || len(turns[0].Items) != 2 {
		t.Fatalf("read %d turns %v", len(turns), err)
	}
	if _, ok := turns[2].Items[0].(*agent.ContextCompaction); !ok {
		t.Fatalf("compaction turn items %v", turns[2].Items)
	}
	loaded, err := h2.core.ResumeThread(t.Context(), id, agent.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	h2.submit(loaded.Thread, agent.UserInput{Input: text("third question")})
	evs := until(t, loaded.Thread, isTurnCompleted)
	// The model sees the compacted history, not the full one.
	req := m2.request(t)
	var texts []string
	for _, it := range req.Input {
		if it.Role == "user" || it.Role == "assistant" {
			texts = append(texts, it.Text())
		}
	}
	joined := strings.Join(texts, "|")
	if strings.Contains(joined, "one") && strings.Contains(joined, "two|") || !strings.Contains(joined, "RESUMED SUMMARY") ||
		!strings.Contains(joined, "first question") || !strings.HasSuffix(joined, "third question") {
		t.Fatalf("resumed request %q", joined)
	}
	for _, tc := range msgs[agent.TokenCount](evs) {
		if tc.Info.ModelContextWindow != window*95/100 {
			t.Fatalf("window after resume %d", tc.Info.ModelContextWindow)
		}
	}
}

// A short thread whose stored usage is past the trigger is not compacted
// when it is resumed and sent a message (Codex compacts it).
func TestNoCompactionOnResumeOfShortThread(t *testing.T) {
	home := t.TempDir()
	const window = 30_000
	huge := fakeResponse{events: append(textEvents("msg_1", "one"), completed(window, 1))}
	m := newFakeModel(huge)
	h := newHarness(t, m, func(c *Config) { withStore(home)(c); withWindow(window)(c) })
	l, err := h.core.StartThread(t.Context(), agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.submit(l.Thread, agent.UserInput{Input: text("short")})
	until(t, l.Thread, isTurnCompleted)
	id := l.Thread.ID()
	if err := h.core.Close(); err != nil {
		t.Fatal(err)
	}
	m2 := newFakeModel(textResponse("msg_2", "two"))
	h2 := newHarness(t, m2, func(c *Config) { withStore(home)(c); withWindow(window)(c) })
	loaded, err := h2.core.ResumeThread(t.Context(), id, agent.Overrides{})
	if err != nil || loaded.Usage == nil || loaded.Usage.Last.Total < window {
		t.Fatalf("resume %+v %v", loaded, err)
	}
	h2.submit(loaded.Thread, agent.UserInput{Input: text("again")})
	evs := until(t, loaded.Thread, isTurnCompleted)
	if n := len(itemsCompleted[*agent.ContextCompaction](evs)); n != 0 {
		t.Fatalf("%d compactions on resume", n)
	}
	if req := m2.request(t); isSummaryRequest(req) {
		t.Fatal("the first request after resume is a summary request")
	}
}
