package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/codexd/codexd/agent"
)

// Store keeps threads. Implementations are safe for concurrent use; each
// thread has at most one Writer at a time. Unknown ids give an error that
// matches agent.ErrThreadNotFound with errors.Is.
type Store interface {
	// Create starts a new thread's rollout. Nothing is written until the
	// first user message is appended (see the package doc).
	Create(ctx context.Context, meta ThreadMeta) (Writer, error)
	// Resume rebuilds a stored thread and returns a Writer that appends
	// to its rollout. A turn left open by a crash is recorded as
	// interrupted. It fails with ErrThreadBusy when the thread already has
	// a writer, here or in another process.
	Resume(ctx context.Context, id string) (*Thread, Writer, error)
	// Read rebuilds a stored thread without writing anything.
	Read(ctx context.Context, id string) (*Thread, error)
	// Info reports a stored thread's metadata from the index; only a
	// thread the index does not know (or a failing index) costs a read of
	// its rollout.
	Info(ctx context.Context, id string) (agent.ThreadInfo, error)
	// List pages through stored threads.
	List(ctx context.Context, q agent.ThreadQuery) (agent.ThreadPage, error)
	// Archive moves a thread's rollout to archived_sessions/ and out of
	// the default listing; Unarchive moves it back. Both are idempotent.
	Archive(ctx context.Context, id string) error
	Unarchive(ctx context.Context, id string) (agent.ThreadInfo, error)
	// Delete removes a thread's rollout (live or archived) and its index
	// rows; a thread with an open Writer is refused (ErrThreadBusy).
	Delete(ctx context.Context, id string) error
	// Revert keeps only the part of a thread's rollout before a turn
	// (ErrTurnNotFound when it has no such turn); no Writer may be open.
	Revert(ctx context.Context, id, beforeTurnID string) error
	// SetName names a thread, through its open Writer if it has one.
	SetName(ctx context.Context, id, name string) error
	// Fork copies a thread's records into a new thread described by meta
	// (its ForkedFromID is set to id) and returns the new thread, rebuilt,
	// with its Writer.
	Fork(ctx context.Context, id string, meta ThreadMeta) (*Thread, Writer, error)
	// Close syncs and closes every open Writer and releases the index.
	Close() error
}

// Writer appends to one thread's rollout. It is safe for concurrent use,
// though one goroutine of the core normally owns it.
type Writer interface {
	// ID is the thread id.
	ID() string
	// Path is where the rollout is (or will be, once materialized).
	Path() string
	// Materialized reports whether the rollout exists on disk: whether a
	// user message has been appended.
	Materialized() bool
	// Append adds records in order. Events that Kept refuses are dropped,
	// so the core may hand it every event. A batch with an invalid record
	// (or with one over the line limit, ErrRecordTooLarge) is refused
	// whole. When the records reach the disk is described in
	// the package doc; an appended TurnCompleted syncs the file. After a
	// write error the records it could not write are kept and retried by
	// the next Append or Sync: do not append them again.
	Append(recs ...Record) error
	// Sync makes everything appended so far durable and brings the index
	// up to date. Before materialization it does nothing.
	Sync() error
	// Close syncs and releases the rollout. Closing a writer that never
	// materialized discards the thread.
	Close() error
}

// Record is one thing to append: an event (Event set), or a model-history
// item (Model set: one JSON value, which the store keeps verbatim and
// never interprets).
type Record struct {
	// Time is when it happened; zero means now.
	Time time.Time
	// TurnID is the turn it belongs to, if any.
	TurnID string
	Event  agent.EventMsg
	Model  json.RawMessage
	// store is one of the store's own records (recStore).
	store string
}

// EventRecord makes the Record of an event.
func EventRecord(ev agent.Event) Record {
	return Record{Time: ev.Time, TurnID: ev.TurnID, Event: ev.Msg}
}

// ModelRecord makes the Record of a model-history item.
func ModelRecord(turnID string, item json.RawMessage) Record {
	return Record{TurnID: turnID, Model: item}
}

// Kept reports whether the store keeps an event: what a thread is rebuilt
// from. Deltas, approval requests, warnings and retry errors are for the
// live stream only: a completed item carries the final content, and a
// TurnCompleted carries the turn's error.
func Kept(msg agent.EventMsg) bool {
	switch msg.(type) {
	case agent.TurnStarted, agent.ItemCompleted, agent.TurnCompleted,
		agent.TokenCount, agent.SettingsUpdated, agent.ThreadNameUpdated:
		return true
	}
	return false
}

// ThreadMeta describes a new thread; it is the rollout's first line.
type ThreadMeta struct {
	// ID is the thread id, a UUID; empty means a new UUIDv7.
	ID string
	// ForkedFromID is the thread this one was forked from (Fork sets it).
	ForkedFromID string
	// CreatedAt is zero for now.
	CreatedAt time.Time
	// Source says who created the thread ("appServer", "exec", "cli"...);
	// ThreadSource is the client's own classification, kept as given.
	Source       string
	ThreadSource string
	Originator   string
	CliVersion   string
	// Settings are the thread's initial settings; SettingsUpdated events
	// change them.
	Settings agent.Settings
	// BaseInstructions and DeveloperInstructions, when set, are the
	// thread's own instructions, needed again on resume.
	BaseInstructions      *string
	DeveloperInstructions *string
}

// Thread is a stored thread rebuilt from its rollout.
type Thread struct {
	Meta ThreadMeta
	Info agent.ThreadInfo
	// Turns are in order. A turn that never completed is Interrupted.
	Turns []agent.Turn
	// Settings are the latest: the meta's, changed by SettingsUpdated.
	Settings agent.Settings
	// TurnModel is the model of the settings the last turn recorded (Codex's
	// previous turn settings); "" if no turn recorded any. Settings changed
	// outside a turn (a resume's overrides) leave it.
	TurnModel string
	// Usage is the last TokenCount's, or nil.
	Usage *agent.TokenUsageInfo
	// History holds the model-history items, in the order appended.
	History []json.RawMessage
	// Skipped counts the lines that could not be read.
	Skipped int
}

// Errors of the store. Unknown threads are reported with
// agent.ErrThreadNotFound.
var (
	// ErrNotMaterialized: the thread exists but has no user message yet,
	// so it has no rollout to read.
	ErrNotMaterialized = errors.New("thread is not materialized yet")
	// ErrThreadExists: Create or Fork was given the id of an existing
	// thread (ours, or a rollout of another program's).
	ErrThreadExists = errors.New("thread already exists")
	// ErrThreadBusy: the thread already has a writer.
	ErrThreadBusy = errors.New("thread already has a writer")
	// ErrInvalidID: a thread id that is not a UUID.
	ErrInvalidID = errors.New("invalid thread id")
	// ErrInvalidCursor: a List cursor that is not a position.
	ErrInvalidCursor = errors.New("invalid cursor")
	// ErrClosed: the writer or the store is closed.
	ErrClosed = errors.New("store: closed")
	// ErrInvalidRecord: a record with neither or both of Event and Model,
	// or a Model that is not one JSON value.
	ErrInvalidRecord = errors.New("store: invalid record")
	// ErrRecordTooLarge: a record whose line would be longer than the
	// store reads back (256 MiB); its batch is refused whole.
	ErrRecordTooLarge = errors.New("store: record too large")
)
