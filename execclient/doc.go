// Package execclient is a Go client of codexd's exec-server (the wire
// contract of Codex 0.169's exec-server): it dials a server over WebSocket
// (ws://, wss://) or a Unix socket (unix://), or connects to an in-process
// server, performs the initialize/initialized handshake, and runs processes
// through process/start, exposing each as a [Process] with output readers,
// stdin writes, interrupt, terminate and Wait.
//
// # Resume
//
// When the connection drops, the client redials (bounded attempts with
// exponential backoff, within Options.ReconnectTimeout, which should stay
// below the server's session TTL), sends initialize with resumeSessionId and
// then initialized, and for every live process calls process/read with
// afterSeq set to the last seq it delivered, so that a notification lost in
// flight, and everything that happened while detached (a resumed server
// pushes only what happens after the resume), is recovered. Until the new
// connection pushes an event of a process, the read is repeated a few times
// (after 50ms, 250ms, 1s and 3s), because a server may start its resumed
// pushes a moment after answering initialize: an event in between is
// neither pushed nor seen by the first read. Notifications are
// deduplicated by seq, so each byte reaches the readers exactly once and
// in order. The same process/read catch-up runs whenever a notification
// arrives with a seq gap. Calls made while the client resumes wait for
// it; writes and reads are retried on the resumed connection (writeIds
// make a retried write harmless), interrupts are not.
//
// # Backpressure
//
// Notification handlers never block the connection. Each process has a
// bounded buffer (Options.MaxBufferedOutput, stdout and stderr together).
// When it is full, further process/output notifications are dropped and
// remembered as a gap; once the reader drains the buffer below half, the
// client refetches the missing output with process/read from the server's
// retained ring (1 MiB per process by default). A reader that stays so far
// behind that the server evicts output it has not refetched loses that
// output; the process then reports ErrOutputLost from Wait. As with
// os/exec's pipes, callers must read Stdout and Stderr concurrently until
// EOF: unread output holds back the events after it, including process/closed,
// on which Wait returns.
//
// # Boundaries
//
// The package must never import the server: it speaks the protocol through
// jsonrpc and execproto only, and builds wherever a client runs (Linux,
// macOS, Windows). [NewInProcess] takes the server as a [StreamServer], an
// interface *execserver.Server satisfies, and serves the other end of an
// in-process socket pair with it.
// The package must not grow policy of a particular front end (flags, exit
// codes, terminal handling): that belongs to its callers, such as execcli.
package execclient
