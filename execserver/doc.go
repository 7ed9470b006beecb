// Package execserver is codexd's exec-server: it runs processes, touches
// files and makes HTTP requests for an agent, over JSON-RPC, speaking the
// wire contract of Codex 0.169's exec-server so that Codex can use it as its
// remote environment.
//
// It maps the protocol onto three building blocks that know nothing of
// JSON-RPC: procs (processes), fsops (files) and httpreq (HTTP). What it adds
// is the connection life cycle (initialize, initialized, gating), sessions
// that outlive a dropped connection for a TTL, and the pumps that turn
// process output into notifications at the pace the client reads them.
//
// It must never know of an agent, a model or a turn: it only executes.
package execserver
