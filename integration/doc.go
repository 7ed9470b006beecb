// Package integration holds tests that drive codexd with the real Codex
// CLI. They skip, saying why, where the Codex binary is absent; see
// README.md for running them and for the same steps by hand.
//
// They must never let the real Codex reach beyond loopback (they run in a
// network namespace of their own) nor send a real exec-server a write or a
// removal outside a test's temporary directory.
package integration
