package jsonrpc

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Listen is a parsed --listen URL.
type Listen struct {
	// Scheme is "stdio", "ws", "unix" or "off".
	Scheme string
	// Addr is host:port for "ws" and the socket path for "unix".
	Addr string
}

// String formats l as a --listen URL.
func (l Listen) String() string {
	switch l.Scheme {
	case "off":
		return "off"
	case "stdio":
		return "stdio://"
	}
	return l.Scheme + "://" + l.Addr
}

// ParseListenURL parses the --listen forms codexd accepts: "stdio://" (or
// "stdio"), "ws://IP:PORT" (port 0 picks a free port), "unix://PATH" and
// "off". Host names other than localhost are refused: a listener binds an
// address, and a name could resolve somewhere unexpected.
func ParseListenURL(s string) (Listen, error) {
	switch s {
	case "off":
		return Listen{Scheme: "off"}, nil
	case "stdio", "stdio://", "-":
		return Listen{Scheme: "stdio"}, nil
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Listen{}, fmt.Errorf("listen URL %q: want stdio://, ws://IP:PORT, unix://PATH or off", s)
	}
	switch scheme {
	case "ws":
		rest = strings.TrimSuffix(rest, "/")
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return Listen{}, fmt.Errorf("listen URL %q: %v", s, err)
		}
		if host != "localhost" {
			if _, err := netip.ParseAddr(host); err != nil {
				return Listen{}, fmt.Errorf("listen URL %q: host must be an IP address or localhost", s)
			}
		}
		if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
			return Listen{}, fmt.Errorf("listen URL %q: bad port %q", s, port)
		}
		return Listen{Scheme: "ws", Addr: net.JoinHostPort(host, port)}, nil
	case "unix":
		if rest == "" {
			return Listen{}, fmt.Errorf("listen URL %q: missing socket path", s)
		}
		return Listen{Scheme: "unix", Addr: rest}, nil
	case "stdio":
		if rest != "" {
			return Listen{}, fmt.Errorf("listen URL %q: stdio takes no address", s)
		}
		return Listen{Scheme: "stdio"}, nil
	}
	return Listen{}, fmt.Errorf("listen URL %q: unknown scheme %q (want stdio, ws, unix or off)", s, scheme)
}
