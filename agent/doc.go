// Package agent is the contract between the agent core and the front-ends
// that drive it (the app-server, `codexd exec`, tests): operations go in,
// events come out.
//
// It holds only types and two small interfaces, Core and Thread, so that a
// front-end can be written and tested against a scripted core (package
// agenttest) and the real core (package core) can be written against no
// front-end at all.
//
// The vocabulary is the core's, not the wire's: items, turns and settings
// here are what the core knows, and the app-server projects them onto
// Codex's v2 protocol. This package must never import JSON-RPC, wire types
// or any implementation of codexd; everything else of the agent depends on
// it, so it depends on nothing.
//
// # Threads, submissions and turns
//
// A Thread is one conversation. Operations are submitted to it and run in
// submission order. Every submission gets an id; the id of a UserInput
// submission that starts a turn becomes that turn's id. A UserInput
// submitted while a turn is active joins that turn instead (as Codex does
// for turn/start during a turn), and Submit reports the active turn's id.
//
// # Events
//
// Each Thread delivers its events, in order, on Events(). A turn's events
// follow one shape:
//
//	TurnStarted
//	  (ItemStarted, deltas..., ItemCompleted)*   items may interleave
//	  TokenCount*, PlanUpdated*, TurnDiff*, Error{WillRetry:true}*
//	  ExecApprovalRequest / PatchApprovalRequest / UserInputRequest (then the
//	  core waits for the matching decision Op)
//	TurnCompleted{Status: completed, interrupted or failed}
//
// An item that was cut short by an interrupt or a steer may have started
// and never complete; TurnCompleted is always the last event of a turn.
// A failed turn is preceded by an Error event with WillRetry false.
//
// The core never drops or reorders events, and never blocks a Submit on a
// consumer that is slow to read Events: a slow consumer holds back the turn
// that produces the events, not the submissions that steer or stop it.
package agent
