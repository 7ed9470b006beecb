// Package netns confines what codexd's side-by-side benchmarks and
// integration tests start (the real Codex among them) to a network
// namespace of their own, with only loopback up, so that nothing they run
// reaches beyond this machine.
//
// It is for bench/ and integration/ only: the codexd binary must never
// import it, and it must never change the namespace of the process that
// calls it (it re-executes the program instead).
package netns
