// Package appserver is codexd's app-server: Codex 0.169's app-server v2
// protocol (package appproto) on the JSON-RPC engine, in front of an agent
// core (package agent). Rich clients (the Codex TUI, IDE extensions,
// scripts, `codexd exec` in process) start threads and turns through it, and
// see the core's events as notifications and approvals as server-to-client
// requests.
//
// It keeps what clients can observe consistent with the core: each loaded
// thread has one listener goroutine that applies the core's events to the
// thread's state and projects them onto the wire, in order; handlers that
// must be ordered with those events (turn/start, turn/interrupt,
// thread/resume...) take the same lock. Approvals go to every subscriber of
// the thread with ids counted per connection, and the first answer wins.
//
// The same handler path serves connections that speak JSON (stdio, Unix
// sockets, WebSocket) and the in-process typed client (Client), which skips
// JSON text altogether.
//
// It must never depend on a particular core (it sees only agent.Core), run
// processes or touch files except through execserver/procs and
// execserver/fsops, nor send a client anything the schema does not define.
package appserver
