package rpcserve

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"

	"github.com/codexd/codexd/jsonrpc"
)

// Endpoint serves one JSON-RPC connection per stream until it ends.
// transport is "websocket", "unix" or "stdio"; peer names the other end
// (a remote address, the socket path, or "stdio").
//
// ServeStreamFrom owns the stream: it closes it before returning. An
// Endpoint ends its live connections itself (in its Close, typically);
// closing a Listener only stops accepting new ones.
type Endpoint interface {
	ServeStreamFrom(stream jsonrpc.Stream, transport, peer string) error
}

// Options configure Handler, Listen and Run. The zero value serves with no
// auth on loopback only.
type Options struct {
	// AuthToken, when set, is the bearer token every WebSocket upgrade must
	// carry.
	AuthToken string
	// InsecureNoAuth allows a ws:// listener on an address other than
	// loopback without an AuthToken. Without it, Listen refuses.
	InsecureNoAuth bool
	// MaxMessage limits one inbound message on every transport (0 means
	// jsonrpc.DefaultMaxMessage).
	MaxMessage int64
}

// Handler serves ep over HTTP: GET /readyz and /healthz answer 200 with an
// empty body, "/" upgrades to a WebSocket carrying one JSON-RPC connection,
// anything else is 404. A request with an Origin header gets 403 whatever
// its path, and, with opts.AuthToken, an upgrade without the right bearer
// token gets 401.
func Handler(ep Endpoint, opts Options) http.Handler {
	h := &handler{ep: ep, maxMessage: opts.MaxMessage}
	if opts.AuthToken != "" {
		sum := sha256.Sum256([]byte(opts.AuthToken))
		h.tokenHash = &sum
	}
	return h
}

type handler struct {
	ep         Endpoint
	maxMessage int64
	tokenHash  *[sha256.Size]byte // nil: no auth
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Browsers always send Origin on cross-origin requests, WebSocket
	// upgrades included; no legitimate client of ours sends one.
	if r.Header.Get("Origin") != "" {
		http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case "/readyz", "/healthz":
		// Codex answers 200 with an empty body (and has no /healthz).
		w.WriteHeader(http.StatusOK)
		return
	case "/":
	default:
		http.NotFound(w, r)
		return
	}
	if h.tokenHash != nil {
		tok, ok := bearerToken(r.Header.Get("Authorization"))
		switch {
		case !ok:
			http.Error(w, "missing websocket bearer token", http.StatusUnauthorized)
			return
		case !h.tokenMatches(tok):
			http.Error(w, "invalid websocket bearer token", http.StatusUnauthorized)
			return
		}
	}
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok && refusePeer(c) {
		http.Error(w, ErrOwnCommand.Error(), http.StatusForbidden)
		return
	}
	// Accept answers 400 to anything that is not a WebSocket upgrade.
	stream, err := jsonrpc.AcceptWebSocket(w, r, h.maxMessage)
	if err != nil {
		return // Accept has written the error response
	}
	_ = h.ep.ServeStreamFrom(stream, "websocket", r.RemoteAddr)
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header. The scheme is case-insensitive (RFC 9110, section 11.1).
func bearerToken(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// tokenMatches compares fixed-size hashes in constant time: comparing the
// tokens themselves would return early on a length mismatch, telling an
// attacker the token's length.
func (h *handler) tokenMatches(tok string) bool {
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) == 1
}
