// Package appproto holds the wire types of Codex 0.169's app-server v2
// protocol, as codexd speaks it: params, results, notifications, server
// requests and the items they carry, with the names, shapes and
// nullability of the JSON Schema that Codex generates (experimental
// fields included), and one typed definition per method that binds its
// name to its params and result types.
//
// It also knows what the schema says about the methods themselves: the
// full list of client methods in Codex's order (for Codex's "unknown
// variant" error), which methods and fields are experimental, and how Codex
// decodes params (required members, thread ids), so that a request that does
// not fit is refused with Codex's message before any server code sees it.
//
// Optional members that Codex writes as null are pointers without
// omitempty; members that Codex always writes (with a default) are plain
// values. Struct fields are declared in the order Codex writes them, so that
// codexd's messages read like Codex's.
//
// It must never import server code (appserver, the agent core) or hold
// behaviour beyond decoding and validating what the schema defines: a
// client, a test or a server may all use it.
package appproto
