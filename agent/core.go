package agent

import (
	"context"
	"time"
)

// Core is the agent core seen from a front-end: it creates, loads and
// stores threads. Implementations are safe for concurrent use.
type Core interface {
	// StartThread creates a thread and loads it.
	StartThread(ctx context.Context, opts StartOptions) (*Loaded, error)
	// ResumeThread loads a stored thread, rebuilt from its rollout, with
	// the given overrides applied. It fails with ErrThreadNotFound when no
	// rollout exists. A thread that is already loaded is returned as it is
	// (History is then the core's view of its completed turns).
	ResumeThread(ctx context.Context, id string, o Overrides) (*Loaded, error)
	// ForkThread copies a stored or loaded thread's history into a new
	// thread and loads it.
	ForkThread(ctx context.Context, id string, opts StartOptions) (*Loaded, error)
	// ReadThread returns a thread's metadata and, with includeTurns, its
	// turns, whether or not it is loaded. ErrThreadNotFound when unknown.
	ReadThread(ctx context.Context, id string, includeTurns bool) (ThreadInfo, []Turn, error)
	// ListThreads pages through stored threads.
	ListThreads(ctx context.Context, q ThreadQuery) (ThreadPage, error)
	// ArchiveThread and UnarchiveThread move a stored thread out of and
	// back into the default listing. SetThreadName names it.
	ArchiveThread(ctx context.Context, id string) error
	UnarchiveThread(ctx context.Context, id string) (ThreadInfo, error)
	// On a loaded thread it also delivers ThreadNameUpdated on the
	// thread's Events, which is how its subscribers learn the new name.
	SetThreadName(ctx context.Context, id, name string) error
	// Models lists the models the configured providers offer.
	Models(ctx context.Context) ([]ModelInfo, error)
	// Config reports the effective configuration new threads start from.
	Config() Config
	// Close shuts every loaded thread down (interrupting running turns)
	// and releases the core's resources.
	Close() error
}

// Loaded is a thread that is ready for operations, with the history it was
// loaded with. Events on Thread.Events() start right after History: no
// event of a turn in History is delivered again, and none after it is
// missed.
type Loaded struct {
	Thread Thread
	Info   ThreadInfo
	// History holds the completed turns, oldest first. A turn that was
	// running when a previous server died is reported Interrupted.
	History []Turn
	// Usage is the restored token usage, if any was recorded.
	Usage *TokenUsageInfo
}

// Thread is one loaded conversation.
type Thread interface {
	// ID is the thread id (a UUIDv7 string).
	ID() string
	// Submit queues op and returns its submission id; for a UserInput it
	// returns the id of the turn the input belongs to. Validation errors
	// (see errors.go) are returned synchronously and queue nothing.
	Submit(ctx context.Context, op Op) (string, error)
	// CheckInput checks, without recording or queueing anything, what of
	// op's input (a UserInput or a Steer) the thread could not take: a
	// localImage whose file its turn cannot read (a *LocalImageError). A
	// front-end calls it before Submit, so that the refusal precedes any
	// turn. It checks nothing Submit checks (a Steer of another turn, a
	// turn that takes no input: those pass here, and Submit refuses them),
	// and a failure to reach the file's machine is no refusal (the turn
	// reports it). What passes may still fail later (the file may go in
	// between): the turn then tells the model in the image's place.
	CheckInput(ctx context.Context, op Op) error
	// Events delivers the thread's events in order. It is closed after
	// the thread has shut down (Shutdown, or Core.Close).
	Events() <-chan Event
	// Settings reports the settings the next turn will use.
	Settings() Settings
}

// StartOptions configure a new thread; zero fields take the core's
// configuration.
type StartOptions struct {
	Overrides
	// Ephemeral threads are never written to disk.
	Ephemeral bool
	// Source says who created the thread ("appServer", "exec", "cli"...).
	Source string
	// ThreadSource is the client's own classification ("user",
	// "thread_title"...), kept as given.
	ThreadSource string
	// BaseInstructions replaces the built-in instructions, and
	// DeveloperInstructions is appended to them, when set.
	BaseInstructions      *string
	DeveloperInstructions *string
	// Originator is the client's name, sent to the model provider.
	Originator string
	// NoTools offers the thread's model no tools at all; a tool call it
	// makes anyway is answered as unsupported and nothing runs. It is how
	// Codex's TUI starts its title job (thread/start whose config turns
	// features.shell_tool and every other tool off). It is not kept
	// across a resume.
	NoTools bool
}

// ThreadInfo is a thread's metadata.
type ThreadInfo struct {
	ID            string
	ForkedFromID  string
	Preview       string // the first user message, if any
	Name          string
	Ephemeral     bool
	Archived      bool
	Model         string
	ModelProvider string
	// ReasoningEffort is the effort the thread last recorded ("" for the
	// model's default).
	ReasoningEffort string
	Cwd             string
	Source          string
	ThreadSource    string
	// Originator is the name of the client that created the thread
	// (StartOptions.Originator), if known.
	Originator string
	CliVersion string
	// Path is the rollout file; empty for an ephemeral thread.
	Path      string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Materialized reports whether the rollout holds a user message yet.
	Materialized bool
}

// ThreadQuery selects stored threads for ListThreads.
type ThreadQuery struct {
	// Cursor continues a previous page; empty starts from the newest.
	Cursor string
	// Limit caps the page size; 0 means the core's default.
	Limit int
	// Archived lists archived threads instead of the others.
	Archived bool
	// SortKey is "created_at" (default) or "updated_at".
	SortKey string
	// Ascending reverses the default newest-first order.
	Ascending bool
	// Cwd, Cwds, ModelProviders and SourceKinds filter when non-empty
	// (Cwds: any of them).
	Cwd            string
	Cwds           []string
	ModelProviders []string
	SourceKinds    []string
	// SearchTerm filters on the preview and name, case-insensitively.
	SearchTerm string
}

// ThreadPage is one page of ListThreads.
type ThreadPage struct {
	Threads []ThreadInfo
	// NextCursor continues the listing; empty when this is the last page.
	NextCursor string
}

// ModelInfo describes a model a client may pick.
type ModelInfo struct {
	ID                       string
	DisplayName              string
	Description              string
	Hidden                   bool
	IsDefault                bool
	DefaultReasoningEffort   string
	SupportedEfforts         []string
	ContextWindow            int64
	SupportsReasoningSummary bool
	// Upgrade is the model clients are invited to move to ("": none).
	Upgrade              string
	ModelSpecialty       string
	InputModalities      []string
	MultiAgentVersion    string
	AdditionalSpeedTiers []string
	ServiceTiers         []ServiceTier
	DefaultServiceTier   string
}

// ServiceTier is a service tier a model offers.
type ServiceTier struct{ ID, Name string }

// Config is the effective configuration that new threads start from.
type Config struct {
	Settings
	// CodexHome is $CODEX_HOME.
	CodexHome string
	// Providers names the configured model providers.
	Providers []string
	// ConfigFile is the config.toml that was read, if any.
	ConfigFile string
}
