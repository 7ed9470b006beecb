// Package procs starts and controls the child processes of one exec-server
// session: it spawns them on pipes or a pseudo-terminal, each in its own
// session and process group; numbers their output, exit and close with one
// gap-free seq counter per process; keeps output in a bounded ring; serves
// long-polled reads; feeds stdin; delivers signals; and reaps every child.
//
// A [Manager] holds the processes of one session. Its methods mirror the
// semantics of Codex's process/* methods (statuses, seq rules, exact error
// messages) so that the server layer only translates. A [Process] also
// offers a pull API ([Process.Events], [Process.VisitEvents],
// [Process.Wait]) for the layer that pushes notifications. Output is read
// into buffers that the ring hands back for reuse, so its bytes never
// leave the process's lock uncopied, except inside VisitEvents. A consumer that holds a process ([Process.Hold],
// [Process.Ack]) is never skipped: the child then waits on its pipe for the
// consumer, as it would for a slow terminal. Without a holder, output waits
// in the ring and the oldest is evicted, and a reader that falls behind
// learns how many chunks it missed.
//
// With [EnableGuard], a guard process (the binary re-executed with
// [GuardArg]) kills what the groups hold when this process dies, even by
// SIGKILL (guard_linux.go).
//
// The package must never know about JSON-RPC, connections or sessions: it
// imports no wire type and sends nothing anywhere. It must never leave a
// process group it started alive after [Manager.Close], leave a zombie
// behind a closed process, or keep a file descriptor or a goroutine of a
// closed process.
package procs
