package core

import (
	"encoding/json"
	"os/exec"
	"strings"

	"github.com/codexd/codexd/agent"
)

// notifyPayload is the JSON argument Codex 0.169 gives the notify program
// (config.toml's notify) at a turn's end: its member names, in its order.
// input-messages are the texts of every user message of the thread so
// far, as Codex sends them (not only the turn's).
type notifyPayload struct {
	Type                 string   `json:"type"`
	ThreadID             string   `json:"thread-id"`
	TurnID               string   `json:"turn-id"`
	Cwd                  string   `json:"cwd"`
	Client               string   `json:"client"`
	InputMessages        []string `json:"input-messages"`
	LastAssistantMessage *string  `json:"last-assistant-message"`
}

// notify runs Config.Notify for a turn that ended (not one interrupted:
// Codex notifies at task_complete), with the payload as its last
// argument. It is not waited for, as in Codex, and its output goes
// nowhere (stdout may be the app-server's JSON-RPC stream); a goroutine
// reaps it.
func (tr *turn) notify(status agent.TurnStatus) {
	t := tr.t
	argv := t.core.cfg.Notify
	if len(argv) == 0 || status == agent.TurnStatusInterrupted {
		return
	}
	p := notifyPayload{
		Type: "agent-turn-complete", ThreadID: t.id, TurnID: tr.id, Cwd: tr.settings.Cwd,
		Client: t.origin, InputMessages: []string{},
	}
	if p.Client == "" {
		p.Client = t.core.cfg.Originator
	}
	if tr.lastMessage != "" {
		s := tr.lastMessage
		p.LastAssistantMessage = &s
	}
	for _, turn := range t.turns.all() {
		for _, it := range turn.Items {
			if um, ok := it.(*agent.UserMessage); ok {
				var parts []string
				for _, in := range um.Content {
					if in.Type == "text" {
						parts = append(parts, in.Text)
					}
				}
				if len(parts) > 0 {
					p.InputMessages = append(p.InputMessages, strings.Join(parts, "\n"))
				}
			}
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	cmd := exec.Command(argv[0], append(append([]string(nil), argv[1:]...), string(b))...)
	if err := cmd.Start(); err != nil {
		t.log.Warn("notify program did not start", "program", argv[0], "err", err)
		return
	}
	go func() { _ = cmd.Wait() }()
}
