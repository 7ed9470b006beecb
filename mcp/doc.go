// Package mcp is codexd's client of the MCP servers a user configures
// ([mcp_servers.NAME] in config.toml): it starts them, keeps their tools,
// calls them and reads their resources, through the official MCP Go SDK.
//
// A Manager serves one thread. Its servers start in the background and
// concurrently; nothing waits for them but a caller that asks to
// (AwaitRequired, for required = true servers). A server is starting,
// ready, failed or cancelled, with a reason; it fails only when it exits
// or its handshake fails, never for being slow. A stdio server that
// exits is restarted on its next use, with backoff, and its tools stay
// listed (as unavailable) meanwhile. Each stdio server runs in a process
// group of its own, killed with the Manager.
//
// Tools are named for the model as Codex 0.169 names them (names.go): a
// namespace "mcp__SERVER" per server, holding the server's tools, both
// sanitised, with a hash suffix where sanitising makes two collide.
//
// This package must never know turns, items or JSON-RPC wire types of
// codexd's own protocols: the core asks it for tools and calls, and the
// app-server for status. It implements the core's connector through the
// plain types of package agent.
package mcp
