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
//	codexd/threads.sqlite                                              (our index; never Codex's state db)
//
// A rollout is one JSON object per line:
//
//	{"timestamp":"2026-01-02T03:04:05.678Z","type":"session_meta","v":1,"payload":{"format":"codexd","id":…}}
//	{"timestamp":…,"type":"event","v":1,"turn_id":"…","payload":{"type":"turn_started",…}}
//	{"timestamp":…,"type":"event","v":1,"turn_id":"…","payload":{"type":"item_completed","item":{"type":"user_message",…}}}
//	{"timestamp":…,"type":"model","v":1,"turn_id":"…","payload":<the core's JSON, verbatim>}
//	{"timestamp":…,"type":"store","v":1,"payload":{"type":"unarchived"}}
//
// The first line describes the thread ([ThreadMeta]); "event" lines carry
// the events listed by [Kept]; "model" lines carry the model-history items;
// "store" lines are the store's own (an unarchive, which counts as an
// update). A line's timestamp is when it happened; the last one is the
// thread's updated_at.
// Every line has the format version "v" (1), so a later codexd that changes
// a payload can still read what an older one appended to the same file.
// Unknown record or event types of the same version are skipped, so new
// kinds can be added without a version change. Files whose first line is
// not ours (Codex's own rollouts, in a shared $CODEX_HOME) are left alone.
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
// returned; and the file is fsync'd at each turn boundary (an appended
// TurnCompleted) and by [Writer.Sync] (shutdown), so a machine that loses
// power loses at most the turn in progress.
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
// and codexd directories, never touches a file that is not a rollout of
// ours, and never stores an ephemeral thread.
package store
