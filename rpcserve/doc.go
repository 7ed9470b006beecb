// Package rpcserve serves a JSON-RPC endpoint on the --listen addresses
// codexd's servers share: a WebSocket listener (ws://IP:PORT, with health
// probes and bearer-token auth on the same port), a Unix socket carrying
// newline-delimited JSON, or the one connection on stdin and stdout.
//
// An [Endpoint] is anything that serves one connection per stream: the
// exec-server and the app-server both are. This package owns what is the
// same for both, and in particular the secure defaults:
//
//   - any HTTP request carrying an Origin header is refused (403), so that a
//     web page can never drive the server;
//   - with an auth token, the WebSocket upgrade must carry
//     "Authorization: Bearer <token>" (the scheme in any case); the token is
//     compared through fixed-size hashes, in constant time, so that neither
//     its bytes nor its length leak;
//   - a ws:// listener on an address other than loopback is refused without
//     a token, unless Options.InsecureNoAuth says otherwise;
//   - a Unix socket is created with mode 0600 from the start.
//
// It imports only the jsonrpc engine and standard or x/ libraries, and must
// never know a method set, a session or a protocol above JSON-RPC: those
// belong to the Endpoint.
package rpcserve
