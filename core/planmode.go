package core

import (
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/planblock"
)

// planSplit is what a plan-mode turn keeps while its answers stream: each
// message's parser and prose, and the turn's plan. As Codex 0.169 shows a
// plan-mode answer, the lines of a <proposed_plan> block become a plan item
// of their own (id "<turn id>-plan", streamed as plan deltas and completed
// just before the message), and the message keeps the rest; the history the
// model sees keeps the whole text.
type planSplit struct {
	parsers map[string]*planblock.Parser
	prose   map[string]*strings.Builder
	plan    strings.Builder
	started bool // the plan item was started and not yet completed
}

func (tr *turn) planMode() bool { return tr.settings.CollaborationMode == "plan" }

func (tr *turn) planItemID() string { return tr.id + "-plan" }

// planFeed takes a delta of message itemID in a plan-mode turn.
func (tr *turn) planFeed(itemID, delta string) {
	ps := &tr.plans
	if ps.parsers == nil {
		ps.parsers, ps.prose = map[string]*planblock.Parser{}, map[string]*strings.Builder{}
	}
	p := ps.parsers[itemID]
	if p == nil {
		p = planblock.New()
		ps.parsers[itemID], ps.prose[itemID] = p, &strings.Builder{}
	}
	tr.planEmit(itemID, p.Feed(delta))
}

func (tr *turn) planEmit(itemID string, chunks []planblock.Chunk) {
	ps := &tr.plans
	for _, c := range chunks {
		switch {
		case c.Start:
			if !ps.started {
				ps.started = true
				ps.plan.Reset()
				tr.emit(agent.ItemStarted{Item: &agent.Plan{ID: tr.planItemID()}})
			}
		case c.End:
		case c.Plan:
			ps.plan.WriteString(c.Text)
			tr.emitStream(agent.PlanDelta{ItemID: tr.planItemID(), Delta: c.Text})
		default:
			ps.prose[itemID].WriteString(c.Text)
			tr.emitStream(agent.AgentMessageDelta{ItemID: itemID, Delta: c.Text})
		}
	}
}

// planFinish ends message itemID, whose whole text is raw: the plan it
// held is completed, and the message's own text (its prose) returned.
func (tr *turn) planFinish(itemID, raw string) string {
	ps := &tr.plans
	var prose string
	if p := ps.parsers[itemID]; p != nil {
		tr.planEmit(itemID, p.Finish())
		prose = ps.prose[itemID].String()
		delete(ps.parsers, itemID)
		delete(ps.prose, itemID)
	} else {
		// No deltas came: the done item alone says what it held.
		var plan string
		var found bool
		prose, plan, found = planblock.Strip(raw)
		if found && !ps.started {
			ps.started = true
			ps.plan.Reset()
			tr.emit(agent.ItemStarted{Item: &agent.Plan{ID: tr.planItemID()}})
		}
		ps.plan.WriteString(plan)
	}
	if ps.started {
		ps.started = false
		tr.emit(agent.ItemCompleted{Item: &agent.Plan{ID: tr.planItemID(), Text: ps.plan.String()}})
	}
	return prose
}
