// Package jsonrpc is a bidirectional JSON-RPC engine in the dialect spoken by
// Codex: messages carry no "jsonrpc" member, and ids are strings or 64-bit
// integers, with 1 and "1" being different ids.
//
// The package has four layers, each usable on its own:
//
//   - The wire: [Request], [Response], [ID] and [Error], with a bounded,
//     single-pass decoder ([Decode]) that counts every JSON value against a
//     budget, caps nesting, rejects duplicate member names at every depth and
//     keeps params and results as the exact bytes that arrived.
//   - Typed methods: [Method] and [Notification] bind a method name to its Go
//     param and result types once, for both the handler and the caller.
//   - The peer: [Conn] correlates responses through a pending table, admits
//     inbound requests under limits, runs handlers concurrently, and drains
//     cleanly when the transport ends.
//   - Transports: [Stream] implementations for newline-delimited JSON (stdio,
//     Unix sockets) and WebSocket, and [ParseListenURL] for --listen flags.
//
// The package must never import anything else of codexd: both servers and
// their clients stand on it, so it knows no server, method set or session.
package jsonrpc
