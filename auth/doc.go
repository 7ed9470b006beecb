// Package auth reads and keeps the sign-in Codex stores in
// $CODEX_HOME/auth.json, so that a user signed in to Codex (with an API key
// or with ChatGPT) is signed in to codexd too, and the other way round.
//
// The file is Codex 0.169's: {"auth_mode", "OPENAI_API_KEY", "tokens":
// {"id_token", "access_token", "refresh_token", "account_id"},
// "last_refresh"}. Members this package does not know are kept as they
// are when it writes the file back. Every write replaces the file
// atomically (a temporary file in the same directory, mode 0600, renamed
// over it), so that a reader (Codex, another codexd) never sees half a
// file.
//
// In ChatGPT mode the access token is refreshed as Codex refreshes it: when
// it has expired (its JWT exp), or, with no exp, when the last refresh is
// more than eight days old, and once more when the backend answers 401. The
// refresh is a POST of {client_id, grant_type: "refresh_token",
// refresh_reason, refresh_token} to https://auth.openai.com/oauth/token
// (CODEX_REFRESH_TOKEN_URL_OVERRIDE replaces it, as in Codex). A refresh the
// token endpoint refuses (401) is a *SignInError: the user must sign in
// again, and retrying cannot help.
//
// This package must never print or log a token or key, never start a
// login flow of its own (it has no browser and no callback server), and
// knows nothing of models, turns or protocols: callers ask it for
// Credentials and put them on their own requests.
package auth
