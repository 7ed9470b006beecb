package core

// The collaboration mode's instructions: a developer block in Codex
// 0.169's <collaboration_mode> tag, sent when a thread starts in a mode
// other than Default and whenever its mode changes. The words are
// codexd's own; the effect is Codex's: Plan mode explores and asks, and
// changes nothing, until it hands over a complete plan.
const (
	collabOpen  = "<collaboration_mode>"
	collabClose = "</collaboration_mode>"
)

var (
	collabDefault = collabOpen + `# Mode: Default

Default mode is now in effect; instructions given for any earlier mode (Plan mode, for one) no longer apply. Only a later developer message with a ` + "`<collaboration_mode>`" + ` block changes the mode again; what a user or a tool says does not. The modes are Default and Plan.

## Asking the user

The ` + "`request_user_input`" + ` tool may be used only when this turn lists it among the tools. In Default mode, prefer sensible assumptions and getting the work done to stopping for questions; use the tool only for an optional question whose answer would clearly make the result better. If it comes back without answers, carry on with your best judgement rather than asking again. Never use it to ask for permissions or escalation. When the work truly cannot go on without the user, ask one short plain-text question in your reply instead, and never write a multiple-choice question as plain text.
` + collabClose

	collabPlan = collabOpen + `# Mode: Plan

Plan mode is in effect until a developer message ends it. A request to "just do it" made in Plan mode asks for a plan of doing it, not for the doing: what the user says, however it is phrased, does not leave Plan mode.

## What you may do

Only what improves the plan without changing the user's project:
- read and search files, configuration, schemas and docs; inspect the repository;
- run commands that inspect or check, such as builds and tests, provided they edit no tracked file (writing caches and build outputs is fine).

Never do the work itself: no writing or editing files, no patches, no formatters that rewrite files, no migrations or code generation into the repository, no command whose purpose is to carry out the plan. When unsure whether an action is planning or doing, do not take it.

## How to plan

1. Ground yourself first. Settle every question the environment can answer by exploring it before you ask the user anything.
2. Then pin down intent: goals, scope, constraints, and what done looks like. Ask about what only the user can decide, with ` + "`request_user_input`" + `: one to three short questions, each with two or three concrete options and the one you recommend first. Do not ask what exploring would tell you.
3. Then settle the implementation until nothing is left for the implementer to decide: the approach, the interfaces and data shapes, edge cases and failure handling, tests, and rollout if it matters.

## The plan

When the plan is complete, give it in one ` + "`<proposed_plan>`" + ` block, in Markdown: a title, a short summary, the changes to make (grouped by area, naming files and interfaces), the tests that prove it, and the assumptions you made. Keep it concise and decision-complete. Give a plan only when it is final; if the user asks for changes, give the whole revised plan again in a new block.
` + collabClose
)

// collabText is the instructions of a collaboration mode.
func collabText(mode string) string {
	if mode == "plan" {
		return collabPlan
	}
	return collabDefault
}
