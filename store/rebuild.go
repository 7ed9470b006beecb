package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/codexd/codexd/agent"
)

// maxLine bounds one rollout line, on both sides: the writer refuses a
// record whose line would be longer (ErrRecordTooLarge), so every line it
// writes is read back whole, and the reader skips a longer line (which
// only another program, or damage, can have written) without holding it
// in memory. Items carry final content, and a command's output is capped
// by the core, so only a model's answer of hundreds of MiB comes near it.
// A variable so that tests can lower it.
var maxLine = 256 << 20

// warnLines is how many bad lines of one file are logged one by one; the
// rest are counted in one last warning.
const warnLines = 5

// summary is what the index needs to know of a thread. The writer keeps it
// as it appends and the replay as it reads, through the same observe, so
// that a rescan finds exactly what the live writer recorded.
type summary struct {
	preview      string
	name         string
	settings     agent.Settings
	updated      time.Time
	materialized bool
	tokens       int64 // the latest token_count's total
}

func (s *summary) observe(e *entry) {
	if e.Time.After(s.updated) {
		s.updated = e.Time
	}
	switch m := e.Event.(type) {
	case agent.ItemCompleted:
		if um, ok := m.Item.(*agent.UserMessage); ok && !s.materialized {
			s.materialized = true
			s.preview = previewOf(um)
		}
	case agent.SettingsUpdated:
		provider := s.settings.ModelProvider
		s.settings = m.Settings
		if s.settings.ModelProvider == "" {
			// Codex's turn_context has no provider: it is the session's.
			s.settings.ModelProvider = provider
		}
	case agent.ThreadNameUpdated:
		s.name = m.Name
	case agent.TokenCount:
		s.tokens = m.Info.Total.Total
	}
	if e.Meta != nil {
		s.settings = e.Meta.Settings
	}
}

// previewOf is the text of a user message, as Codex's preview shows it.
func previewOf(um *agent.UserMessage) string {
	var parts []string
	for _, in := range um.Content {
		if in.Text != "" {
			parts = append(parts, in.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// replay rebuilds a thread from its entries, in file order.
type replay struct {
	summary
	meta    *ThreadMeta
	turns   []agent.Turn
	lastAt  []time.Time // per turn: its last record's time
	byID    map[string]int
	open    int // the turn a TurnStarted opened and nothing closed yet; -1
	usage   *agent.TokenUsageInfo
	history []json.RawMessage
	skipped int
	// turnModel is the model of the last settings a turn recorded (its
	// turn context); a resume's overrides, recorded outside any turn, do
	// not change it.
	turnModel string
}

func newReplay() *replay { return &replay{byID: map[string]int{}, open: -1} }

func (r *replay) apply(e *entry) {
	r.observe(e)
	switch {
	case e.Meta != nil:
		if r.meta == nil {
			r.meta = e.Meta
		}
		return
	case e.Model != nil:
		r.history = append(r.history, e.Model)
		return
	}
	switch m := e.Event.(type) {
	case agent.TurnStarted:
		if i, ok := r.byID[e.TurnID]; ok && i == r.open {
			return // a repeated TurnStarted: the same turn goes on
		}
		r.interruptOpen()
		started := m.StartedAt
		if started.IsZero() {
			started = e.Time
		}
		r.open = r.addTurn(e.TurnID, started, e.Time)
	case agent.ItemCompleted:
		i := r.turnFor(e.TurnID, e.Time)
		t := &r.turns[i]
		r.lastAt[i] = e.Time
		id := m.Item.ItemID()
		if id != "" {
			if t.ItemTimes == nil {
				t.ItemTimes = map[string]agent.ItemTime{}
			}
			started := m.StartedAt
			if started.IsZero() || started.After(e.Time) {
				started = e.Time
			}
			t.ItemTimes[id] = agent.ItemTime{Started: started, Completed: e.Time}
		}
		for j := range t.Items {
			if id != "" && t.Items[j].ItemID() == id {
				t.Items[j] = m.Item // completed again: the last one is final
				return
			}
		}
		t.Items = append(t.Items, m.Item)
	case agent.TurnCompleted:
		i := r.turnFor(e.TurnID, e.Time)
		t := &r.turns[i]
		t.Status = m.Status
		if t.Status == "" || t.Status == agent.TurnStatusInProgress {
			t.Status = agent.TurnStatusCompleted
		}
		t.Error = m.Error
		t.CompletedAt = m.CompletedAt
		t.Duration = m.Duration
		if t.CompletedAt.IsZero() {
			t.CompletedAt = e.Time
		}
		r.lastAt[i] = e.Time
		if i == r.open {
			r.open = -1
		}
	case agent.TokenCount:
		u := m.Info
		r.usage = &u
	case agent.SettingsUpdated:
		if e.TurnID != "" || r.open >= 0 {
			r.turnModel = m.Settings.Model
		}
	}
}

func (r *replay) addTurn(id string, started, at time.Time) int {
	r.turns = append(r.turns, agent.Turn{ID: id, Status: agent.TurnStatusInProgress, StartedAt: started})
	r.lastAt = append(r.lastAt, at)
	r.byID[id] = len(r.turns) - 1
	return len(r.turns) - 1
}

// turnFor finds the turn a record belongs to: the open turn for a record
// without a turn id, else the turn with that id, else a new one (whose
// TurnStarted was lost).
func (r *replay) turnFor(id string, at time.Time) int {
	if id == "" && r.open >= 0 {
		return r.open
	}
	if i, ok := r.byID[id]; ok {
		return i
	}
	return r.addTurn(id, time.Time{}, at)
}

// interruptOpen ends the open turn as interrupted: a TurnStarted followed
// it, so its process died before completing it.
func (r *replay) interruptOpen() {
	if r.open < 0 {
		return
	}
	r.interrupt(r.open)
	r.open = -1
}

func (r *replay) interrupt(i int) {
	t := &r.turns[i]
	if t.Status == agent.TurnStatusInProgress {
		t.Status = agent.TurnStatusInterrupted
		t.CompletedAt = r.lastAt[i]
	}
}

// finish ends every turn still in progress as interrupted, and reports
// which they were (normally the last one, when the process died mid-turn).
func (r *replay) finish() (dangling []agent.Turn) {
	for i := range r.turns {
		if r.turns[i].Status == agent.TurnStatusInProgress {
			r.interrupt(i)
			dangling = append(dangling, r.turns[i])
		}
	}
	r.open = -1
	return dangling
}

// thread assembles the result. home decides whether path is archived.
func (r *replay) thread(home, path string) *Thread {
	th := &Thread{
		Turns: r.turns, Settings: r.settings, TurnModel: r.turnModel, Usage: r.usage, History: r.history, Skipped: r.skipped,
	}
	if r.meta != nil {
		th.Meta = *r.meta
	}
	th.Info = r.info(home, path)
	return th
}

func (r *replay) info(home, path string) agent.ThreadInfo {
	var m ThreadMeta
	if r.meta != nil {
		m = *r.meta
	}
	return agent.ThreadInfo{
		ID: m.ID, ForkedFromID: m.ForkedFromID, Preview: r.preview, Name: r.name,
		Archived: isArchivedPath(home, path), Model: r.settings.Model,
		ModelProvider: r.settings.ModelProvider, ReasoningEffort: r.settings.ReasoningEffort, Cwd: r.settings.Cwd, Source: m.Source,
		ThreadSource: m.ThreadSource, Originator: m.Originator, CliVersion: m.CliVersion, Path: path,
		CreatedAt: m.CreatedAt, UpdatedAt: r.updated, Materialized: r.materialized,
	}
}

// readResult is a rollout read back.
type readResult struct {
	*replay
	// tornTail: the file does not end with a newline (a write cut short),
	// so an appender must start a new line first.
	tornTail bool
	// length is the bytes read; fragment, the length of a last line
	// without its newline.
	length, fragment int64
	// ordinal is the next line's: one past the last ordinal read (Codex
	// numbers its lines from 0), or the number of lines if none had one.
	ordinal int64
	// legacy: the rollout is in codexd's legacy format (migrate.go).
	legacy bool
}

// readRollout replays a rollout from rd. name is the file's base name, for
// a thread whose meta line was lost. raw, if set, sees the bytes of every
// line that decoded, except the meta line. It fails only on a read error,
// a cancelled ctx, or errForeign for a file that is not ours.
func readRollout(ctx context.Context, rd io.Reader, path string, log *slog.Logger, raw func([]byte, *entry)) (*readResult, error) {
	br := bufio.NewReaderSize(rd, 64<<10)
	res := &readResult{replay: newReplay()}
	var long []byte // a line longer than br's buffer, gathered
	tooLong := false
	var lineLen int64
	lineNo, first, decoded := 0, true, 0
	warn := func(msg string, err error) {
		res.skipped++
		if res.skipped <= warnLines {
			log.Warn("store: skipped a rollout line", "path", path, "line", lineNo, "reason", msg, "err", err)
		}
	}
	for {
		chunk, err := br.ReadSlice('\n')
		lineLen += int64(len(chunk))
		res.length += int64(len(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			if !tooLong && len(long)+len(chunk) > maxLine {
				tooLong, long = true, nil
			}
			if !tooLong {
				long = append(long, chunk...)
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
		}
		eof := err != nil
		if len(line) > 0 || tooLong {
			lineNo++
			complete := len(line) > 0 && line[len(line)-1] == '\n'
			res.tornTail, res.fragment = !complete, 0
			if !complete {
				res.fragment = lineLen
			}
			body := bytes.TrimSuffix(line, []byte{'\n'})
			switch {
			case tooLong || len(body) > maxLine:
				warn("line too long", nil)
			case len(bytes.TrimSpace(body)) == 0:
				// blank: what a torn tail repair leaves; nothing lost
			default:
				e, derr := decodeLine(body)
				if derr == nil || errors.Is(derr, errQuiet) {
					res.ordinal = max(res.ordinal, int64(lineNo))
				}
				if derr == nil && e.Ordinal >= 0 {
					res.ordinal = max(res.ordinal, e.Ordinal+1)
				}
				if derr == nil && e.Legacy {
					res.legacy = true
				}
				switch {
				case derr == nil:
					if first && e.Meta == nil {
						log.Warn("store: rollout does not start with its meta line", "path", path)
					}
					decoded++
					if raw != nil && e.Meta == nil {
						raw(body, &e)
					}
					res.apply(&e)
				case errors.Is(derr, errQuiet):
					log.Debug("store: skipped a rollout line", "path", path, "line", lineNo, "err", derr)
				case !complete:
					warn("torn last line", derr)
				default:
					warn("corrupt line", derr)
				}
			}
			first = false
		}
		long, tooLong, lineLen = nil, false, 0
		if eof {
			break
		}
		if lineNo%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if res.skipped > warnLines {
		log.Warn("store: skipped more rollout lines", "path", path, "skipped", res.skipped)
	}
	if res.meta == nil {
		if decoded == 0 {
			return nil, errForeign // nothing of ours in it
		}
		// The meta line was lost: the name still says who and when.
		t, id, ok := parseRolloutName(filepath.Base(path))
		if !ok {
			return nil, errForeign
		}
		res.meta = &ThreadMeta{ID: id, CreatedAt: t.UTC()}
	}
	return res, nil
}
