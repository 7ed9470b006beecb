// Package filesearch finds files and directories by fuzzy name, for the
// app-server's fuzzyFileSearch methods (the TUI's @ mentions): it walks
// roots as Codex 0.169's file search does (hidden entries listed, ignore
// files honoured, links followed), scores each path with the same scoring
// rules and name tiers, and keeps sessions whose query changes as the user
// types while the walk is cached.
//
// It must never write to the trees it searches, nor follow a link into a
// directory it has already entered, and it knows nothing of JSON-RPC.
package filesearch
