// Package integration holds tests that drive codexd with the real Codex
// CLI. They skip, saying why, where the Codex binary is absent; see
// README.md for running them and for the same steps by hand.
package integration
