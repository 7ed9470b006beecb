// Package config reads Codex's configuration, $CODEX_HOME/config.toml, the
// way Codex 0.169 does, so that a user's existing Codex config drives codexd
// unchanged.
//
// It knows the keys that matter to an agent that talks to a model and runs
// commands: the model and its provider (the [model_providers.NAME] tables,
// merged with the built-in providers), the approval policy, the sandbox mode
// and its [sandbox_workspace_write] table, reasoning and verbosity settings,
// instructions, project-doc limits, [shell_environment_policy] (as an
// execenv.Policy) and [profiles.NAME]. Every other key is
// ignored, as Codex ignores keys it does not use, so a config written for
// Codex (with [features], [tui] and so on) loads as it is. The [mcp_servers.NAME]
// tables are read as Codex reads them (file mcp.go); a key Codex knows there
// and codexd does not act on becomes a [Warning].
// A known key of the wrong type or with an unknown value is an *Error that
// names the file, the line and the key. [CheckCodexTypes] holds a whole
// document to the types Codex gives every key it knows (its config
// schema, embedded), for the app-server's config writes.
//
// Layers, lowest first (as in Codex): config.toml, the profile's
// $CODEX_HOME/NAME.config.toml (Codex 0.169's form; without that file the
// older [profiles.NAME] table applies after the -c overrides), then a
// trusted project's .codex/config.toml files from its root down to the
// working directory ([projects."PATH"] trust_level = "trusted" in the
// user's config; a project's own file cannot trust itself).
//
// Precedence, lowest first (as in Codex): built-in defaults, config.toml,
// `-c key=value` overrides (applied to the TOML tree before it is read),
// the selected profile, then the explicit settings of [LoadOptions] (what
// CLI flags such as --model set).
//
// # Providers
//
// The built-in providers are Codex's "openai", "ollama" and "lmstudio", and
// codexd's "mock", the in-process mock model (package mockmodel). Codex's
// built-ins cannot be redefined by config.toml (an entry with their id is
// ignored, as in Codex). "mock" is codexd's own, and Codex users commonly
// define a provider of that name pointing at a mock server, so a configured
// [model_providers.mock] with a base_url replaces the built-in one, and one
// without a base_url only adjusts it (retries, timeouts). A provider that
// is the built-in mock has Provider.Builtin == BuiltinMock and no BaseURL:
// whoever uses it starts the mock server and sets the URL.
//
// Only wire_api = "responses" exists; any other value is an error naming it.
//
// This package must never do I/O beyond reading the config files and the
// environment, start anything, or know about turns, threads or protocols.
package config
