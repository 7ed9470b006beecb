// Package execpolicy reads and writes Codex's command rules, the
// $CODEX_HOME/rules/*.rules files, so that a command a user chose to always
// allow in Codex is allowed in codexd too, and the other way round.
//
// A rules file is Codex's Starlark subset: calls such as
//
//	prefix_rule(pattern=["git", ["status", "diff"]], decision="allow")
//
// one per rule, with # comments. A pattern is a list of tokens, each a
// string or a list of alternatives; it matches a command whose argv
// starts with it. decision is "allow" (the default), "prompt" or
// "forbidden"; justification, match and not_match are read and kept. When
// several rules match a command, the most restrictive decision wins, as in
// Codex. Calls of other functions (Codex's other rule kinds) are parsed and
// ignored, so a file written for Codex always loads.
//
// Amendments are appended to rules/default.rules in Codex's canonical
// form, prefix_rule(pattern=["a", "b"], decision="allow"), under an
// advisory lock, once (an identical line is not written again).
//
// This package must never run a command or decide what an approval policy
// does with a decision: the core asks it and applies its own policy. Its
// parser must never panic or recurse without bound on any input (it is
// fuzzed).
package execpolicy
