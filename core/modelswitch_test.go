package core

import (
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// TestModelSwitch: a turn on another model than the last keeps the base
// instructions and records a <model_switch> developer message with the new
// model's instructions before its input, as Codex 0.169 does side by side;
// a turn on the same model records none.
func TestModelSwitch(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"), textResponse("msg_3", "ok"))
	h := newHarness(t, m, nil)
	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: text("one")})
	until(t, th, isTurnCompleted)
	first := m.request(t)
	h.submit(th, agent.UserInput{Input: text("two"), Overrides: agent.Overrides{Model: strp("gpt-5.4")}})
	until(t, th, isTurnCompleted)
	second := m.request(t)
	base := first.Input[0].Text()
	if got := second.Input[0].Text(); got != base {
		t.Fatalf("the base instructions changed with the model:\n%.80s\nwant\n%.80s", got, base)
	}
	n := len(second.Input)
	sw, user := second.Input[n-2], second.Input[n-1]
	info := h.core.modelInfo("gpt-5.4")
	want := modelSwitchOpen + "\n" + modelSwitchLead + "\n\n" + baseInstructions(info.Instructions()) + "\n" + modelSwitchClose
	if sw.Role != "developer" || sw.Text() != want || user.Text() != "two" || second.Input[n-3].Role != "assistant" {
		t.Fatalf("the switch turn ends %s %.60q, %s %q", sw.Role, sw.Text(), user.Role, user.Text())
	}
	h.submit(th, agent.UserInput{Input: text("three")})
	until(t, th, isTurnCompleted)
	third := m.request(t)
	switches := 0
	for _, it := range third.Input {
		if strings.HasPrefix(it.Text(), modelSwitchOpen) {
			switches++
		}
	}
	if switches != 1 {
		t.Fatalf("%d model switches after a turn on the same model", switches)
	}
}

// After a switch to a model without original detail, the history's images
// are sent at high detail (Codex 0.169, side by side); the history keeps
// them as they were.
func TestModelSwitchImageDetail(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"), textResponse("msg_3", "ok"))
	h := newHarness(t, m, nil)
	writeFile(t, h.dir+"/dot.png", string(testPNG(t, 3, 2)))
	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: []agent.Input{{Type: "localImage", Path: "dot.png"}}})
	until(t, th, isTurnCompleted)
	m.request(t)
	details := func(model string) []string {
		h.submit(th, agent.UserInput{Input: text("again"), Overrides: agent.Overrides{Model: strp(model)}})
		until(t, th, isTurnCompleted)
		var out []string
		for _, it := range m.request(t).Input {
			for _, c := range it.Content {
				if c.Type == "input_image" {
					out = append(out, c.Detail)
				}
			}
		}
		return out
	}
	if d := details("mystery-model"); strings.Join(d, ",") != "high" {
		t.Fatalf("on a model without original detail: %v", d)
	}
	if d := details("gpt-5.5"); strings.Join(d, ",") != "original" {
		t.Fatalf("back on gpt-5.5: %v", d)
	}
}
