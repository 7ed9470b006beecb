package core

import "github.com/codexd/codexd/core/prompt"

// When a thread's model changes between turns, Codex 0.169 keeps the base
// instructions the thread started with and tells the model of the change
// in a developer message of its own, before the turn's other context
// updates: `<model_switch>`, a sentence saying the conversation continues
// on another model, and that model's base instructions (codexd's own,
// for the new model's family). Not when the base instructions are the
// user's own (base_instructions, model_instructions_file): those do not
// vary with the model.
const (
	modelSwitchOpen  = "<model_switch>"
	modelSwitchClose = "</model_switch>"
	modelSwitchLead  = "From here on the conversation continues on a different model than before. Carry on, following these instructions:"
)

// modelSwitchItem is the message for a switch to model, or nil when there
// is nothing to say: no earlier turn, the same model, or instructions of
// the user's own.
func (tr *turn) modelSwitchItem(last string) []prompt.Item {
	t := tr.t
	model := tr.settings.Model
	t.mu.Lock()
	custom := t.base.base != nil
	t.mu.Unlock()
	if last == "" || last == model || custom || t.core.cfg.BaseInstructions != "" {
		return nil
	}
	info := t.core.modelInfo(model)
	text := modelSwitchOpen + "\n" + modelSwitchLead + "\n\n" + baseInstructions(info.Instructions()) + "\n" + modelSwitchClose
	return []prompt.Item{textMessage("developer", text)}
}
