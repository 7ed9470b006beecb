// Package execproto holds the wire types of the exec-server protocol: the
// params, results and notification params of every method, with the JSON
// member names, optionality and encodings that Codex uses, so that codexd and
// Codex clients read each other's messages unchanged.
//
// It is a leaf package of plain data: the server, its clients and tests all
// import it. It must never import server code, nor hold behaviour beyond
// what a type needs to encode itself.
package execproto
