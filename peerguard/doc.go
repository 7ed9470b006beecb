// Package peerguard tells whether the process at the other end of a local
// connection (loopback TCP or a Unix socket) is a descendant of this one:
// one of the commands a server ran, or something they started. A server
// refuses such a peer so that a command, sandboxed or not, can never drive
// the server that runs (and confines) it: a sandboxed command allowed the
// network could otherwise reach the app-server's tokenless loopback
// WebSocket and call command/exec outside any sandbox.
//
// A Unix peer is known from SO_PEERCRED. A TCP peer is found through
// /proc: the connection's client socket in /proc/net/tcp{,6}, then the
// descendants holding it in /proc/PID/fd. Descendants are what the ppid
// chain leads from to this process; a server that is a child subreaper
// (procs.EnableSubreaper) keeps orphans that double-fork or setsid in its
// tree. When a descendant's descriptors cannot be read (it made itself
// non-dumpable) and the socket is found nowhere else, the peer cannot be
// cleared, and counts as a descendant. A socket this process holds itself
// is its own connection, whatever child holds a copy (every command holds
// one between its fork and its exec).
//
// It never signals or touches the processes it reads, and knows no
// protocol. Off Linux it finds no descendant.
package peerguard
