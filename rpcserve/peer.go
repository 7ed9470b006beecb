package rpcserve

import (
	"errors"
	"net"

	"github.com/codexd/codexd/peerguard"
)

// ErrOwnCommand is why a connection from one of the server's own commands
// is refused (403 on a WebSocket upgrade; a Unix connection is closed).
var ErrOwnCommand = errors.New("a command run by this server may not connect to it")

// connKey carries the accepted net.Conn of a WebSocket listener's request.
type connKey struct{}

// refusePeer reports whether the process at the other end of c descends
// from this one: a command this server runs (through its exec-server,
// command/exec or an agent's tools), which must never drive the server
// that confines it. A peer that cannot be looked up is refused too.
func refusePeer(c net.Conn) bool {
	own, err := peerguard.IsDescendant(c)
	return own || err != nil
}
