// Package store persists agent threads: one append-only JSONL rollout per
// thread, the source of truth, and a SQLite index over them that serves
// listings and is only ever a cache.
//
// The agent core is its only writer. It creates a thread's rollout with
// [Store.Create], appends what is worth keeping through a [Writer] (agent
// events and the model's own history items, which the store keeps as opaque
// JSON), and gets a thread back after a restart with [Store.Resume] or
// [Store.Read], rebuilt from the rollout: metadata, turns and their items,
// the latest settings, token usage and the model history, in order.
//
// # On disk
//
// Under $CODEX_HOME, with Codex's names:
//
//	sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread id>.jsonl   (local time, as Codex)
//	archived_sessions/rollout-…-<thread id>.jsonl                      (archived: moved here, flat)
//	codexd/threads.sqlite                                              (our index; Codex keeps its own)
//
// A rollout is one JSON object per line, in Codex 0.169's format (the
// RolloutLine and RolloutItem types of Codex's protocol crate; codex_line.go
// has the details), so that Codex and codexd each list, read, resume and
// continue the other's threads on one $CODEX_HOME:
//
//	{"timestamp":"2026-01-02T03:04:05.678Z","ordinal":0,"type":"session_meta","payload":{"id":…,"cwd":…,"codexd":{…}}}
//	{"timestamp":…,"ordinal":1,"type":"event_msg","payload":{"type":"task_started","turn_id":…}}
//	{"timestamp":…,"ordinal":2,"type":"turn_context","payload":{"model":…,"sandbox_policy":…}}
//	{"timestamp":…,"ordinal":3,"type":"response_item","payload":<the core's JSON, verbatim>}
//	{"timestamp":…,"ordinal":4,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage",…}}}
//	{"timestamp":…,"ordinal":5,"type":"event_msg","payload":{"type":"task_complete","turn_id":…}}
//
// The kept events map to Codex's event_msg payloads (task_started,
// item_completed with Codex's TurnItem, task_complete or turn_aborted,
// token_count, thread_name_updated); settings updates are turn_context
// lines; model-history items are response_item lines, except the core's
// compaction record, which is Codex's compacted line. What Codex has no
// field for goes in a "codexd" member of the payload, which Codex ignores;
// the store's own records (an unarchive, which counts as an update) are
// lines of type "codexd", which Codex skips. Codex's lines that rebuild
// nothing codexd keeps (world_state, token_usage_record, live-stream
// events) are skipped quietly; a line's timestamp is when it happened, to
// the millisecond, and the last one is the thread's updated_at. Rollouts
// of an earlier codexd's own format are converted on first use
// (migrate.go).
//
// # Durability
//
// A thread's file exists once it is materialized: when its first user
// message is appended (Codex creates its file lazily in the same way).
// Until then records wait in memory, Read and Resume report
// [ErrNotMaterialized], and closing the writer leaves nothing behind.
//
// From then on each Append call ends with one write(2) of the records it
// was given, so a process that is killed loses nothing that Append
// returned. The file's fsync starts at each turn boundary (an appended
// TurnCompleted) and runs in the background, so that a turn's end never
// waits for the disk; [Writer.Sync] (shutdown) and Close wait for it and
// sync what came after. A machine that loses power loses at most the turn
// in progress, and the turn that just ended if the power goes during its
// fsync (milliseconds). Codex 0.169 never fsyncs its rollouts.
//
// A rollout is read back leniently: a line that does not decode (a torn
// write at the end, garbage in the middle) is skipped with a warning through
// slog, and loading goes on. A turn that was started and never completed
// (the process died mid-turn) is rebuilt as interrupted, and [Store.Resume]
// records that, so that nothing completed before it is lost and new turns
// follow cleanly.
//
// # The index
//
// The index holds one row per stored thread and answers [Store.List] with
// keyset pagination. It is rebuilt from the rollouts when it is missing,
// corrupt or of another schema version, and every Open rescans the rollout
// directories, re-reading only files whose size or modification time the
// index does not know, so a rollout written while the index was unavailable
// is picked up. An index that fails at run time is logged and never fails an
// append, a read or any other operation on a stored thread (only List
// needs it): the rollout is what counts.
//
// # What it must never do
//
// It must never import the core, the app-server or any JSON-RPC or wire
// type: it knows package agent only. It never interprets model-history
// items. It never writes outside $CODEX_HOME's sessions, archived_sessions
// and codexd directories, never touches a file that is not a rollout, and
// never stores an ephemeral thread.
package store
