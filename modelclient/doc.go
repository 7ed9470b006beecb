// Package modelclient streams responses from a model through the OpenAI
// Responses API (POST {base_url}/responses with stream: true), as Codex
// 0.169 does: the request body Codex sends, the server-sent events it reads,
// its retry and idle-timeout rules.
//
// A [Client] is made from a config.Provider. [Client.Stream] sends one
// [Request] (history as input items, tools, reasoning settings), retrying
// HTTP 429, 5xx and transport failures with exponential backoff and jitter
// or the server's Retry-After, and reporting each retry before it sleeps.
// The returned [Stream] yields a small set of typed events ([Created],
// [OutputItemAdded], [OutputTextDelta], [FunctionCallArgumentsDelta],
// reasoning deltas, [OutputItemDone], [Completed]) and then io.EOF. A stream
// that goes idle longer than the provider's stream_idle_timeout_ms ends with
// [ErrStreamIdle], one that stops before response.completed with
// [ErrStreamCut]; retrying those (stream_max_retries) is the caller's call.
// Cancelling the context closes the HTTP connection at once.
//
// # What it uses of openai-go
//
// The events are framed by github.com/openai/openai-go/v3's SSE decoder
// (packages/ssestream: `event:`/`data:` lines, multi-line data, comments,
// CRLF). The rest is done here, on net/http:
//   - The request. The SDK's client would only join the base URL and add
//     headers here, and importing it links every API service the SDK has
//     (half of codexd's code, resident in every codexd process, the
//     exec-server's included). Credentials stay on their origin: a
//     redirect elsewhere drops the key and the provider's headers.
//   - Retries: the SDK's retry loop has no hook before it sleeps, and the
//     caller must announce a retry (error {willRetry: true}) before the
//     wait.
//   - Event decoding: the SDK's typed stream (ssestream.Stream) ends the
//     whole stream on the first event whose data is not valid JSON, turns
//     any event carrying a top-level "error" member into an opaque error,
//     and stops at "[DONE]"; Codex skips an event it cannot parse and goes
//     on. So each event's JSON is decoded here into the package's own
//     small types, keeping unknown events and item types (they are
//     skipped, or kept raw). An event with an index Codex cannot parse (a
//     negative one, or one past a u32) is skipped likewise.
//   - A bound on each event: the decoder joins any number of data lines
//     into one event, so the body is read through a limit, and an event
//     over [MaxEventBytes] ends the stream with [ErrEventTooLarge].
//   - The idle timeout, which the SDK does not have.
//
// Codex's environment-driven SDK defaults (OPENAI_BASE_URL, OPENAI_ORG_ID,
// OPENAI_CUSTOM_HEADERS, ...) are not applied: only the provider's settings
// decide where a request goes and what it carries, so a key or an
// organisation id meant for OpenAI never reaches another provider.
//
// This package knows nothing of turns, threads, tools' meaning, JSON-RPC or
// the app-server. It must never turn events into conversation items, retry
// a stream on its own, or read configuration files.
package modelclient
