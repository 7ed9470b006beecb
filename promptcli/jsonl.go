package promptcli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/appserver"
)

// sink prints a run. Its methods are called on the run's goroutine only.
type sink interface {
	// threadStarted: the thread exists; the turn is about to start.
	threadStarted(appproto.ThreadStartResponse)
	// notification is every notification of the client, in order; usage
	// is the thread's latest token usage.
	notification(m appserver.Message, usage *appproto.ThreadTokenUsage)
	// turnEnded: turn/completed arrived (completed, failed or
	// interrupted).
	turnEnded(t appproto.Turn, usage *appproto.ThreadTokenUsage)
	// notice is a line for the person watching (stderr in both forms).
	notice(msg string)
	// failure: the run failed outside the turn (a request was refused).
	failure(msg string)
	// close: the run is over, whichever way.
	close()
}

// jsonSink prints `codex exec --json`'s JSONL, as Codex 0.169 emits it
// (codex-rs/exec/src/exec_events.rs and the JSONL event processor):
//
//   - thread.started {thread_id} once the thread exists;
//   - turn.started {};
//   - item.started / item.updated / item.completed {item}, where item is
//     {id: "item_N", type, ...}: agent_message {text} and reasoning {text}
//     (the summary) only when completed; command_execution {command,
//     aggregated_output, exit_code, status} and file_change {changes
//     [{path, kind}], status} when started and completed; todo_list
//     {items [{text, completed}]}, started by the first plan update,
//     updated by the next ones and completed when the turn ends; error
//     {message} for a warning;
//   - error {message} for every error notification (a retry's too), with
//     " (details)" appended when there are details;
//   - turn.completed {usage} or turn.failed {error {message}}; an
//     interrupted turn ends with neither.
//
// Statuses are snake_case (in_progress, completed, failed, declined; a
// declined file change is failed), item ids count from item_0 in the
// order items first appear, and usage is the thread's total.
type jsonSink struct {
	w      io.Writer
	errw   io.Writer
	nextID int
	// ids maps the app-server's item ids of items started (and not yet
	// completed) to theirs here.
	ids  map[string]string
	todo *todoListItem
	// lastError is the last error notification's message: the turn's
	// error when turn/completed carries none.
	lastError string
}

func newJSONSink(stdout, stderr io.Writer) *jsonSink {
	return &jsonSink{w: stdout, errw: stderr, ids: make(map[string]string)}
}

// The events and items, with their members in Codex's order.
type (
	threadStartedEvent struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
	}
	typeOnlyEvent struct {
		Type string `json:"type"`
	}
	itemEvent struct {
		Type string `json:"type"`
		Item any    `json:"item"`
	}
	turnCompletedEvent struct {
		Type  string `json:"type"`
		Usage usage  `json:"usage"`
	}
	turnFailedEvent struct {
		Type  string      `json:"type"`
		Error messageOnly `json:"error"`
	}
	errorEvent struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	messageOnly struct {
		Message string `json:"message"`
	}
	usage struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
		ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
	}

	textItem struct {
		ID   string `json:"id"`
		Type string `json:"type"` // agent_message, reasoning
		Text string `json:"text"`
	}
	commandItem struct {
		ID               string `json:"id"`
		Type             string `json:"type"` // command_execution
		Command          string `json:"command"`
		AggregatedOutput string `json:"aggregated_output"`
		ExitCode         *int   `json:"exit_code"`
		Status           string `json:"status"`
	}
	fileChangeItem struct {
		ID      string       `json:"id"`
		Type    string       `json:"type"` // file_change
		Changes []fileChange `json:"changes"`
		Status  string       `json:"status"`
	}
	fileChange struct {
		Path string `json:"path"`
		Kind string `json:"kind"` // add, delete, update
	}
	todoListItem struct {
		ID    string     `json:"id"`
		Type  string     `json:"type"` // todo_list
		Items []todoItem `json:"items"`
	}
	todoItem struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	}
	errorItem struct {
		ID      string `json:"id"`
		Type    string `json:"type"` // error
		Message string `json:"message"`
	}
)

func (s *jsonSink) emit(v any) {
	// Output from commands may hold bytes that are not UTF-8: they become
	// U+FFFD rather than a line that is not JSON.
	b, err := json.Marshal(v, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		b, _ = json.Marshal(errorEvent{Type: "error", Message: "failed to encode an exec json event: " + err.Error()})
	}
	_, _ = s.w.Write(append(b, '\n'))
}

func (s *jsonSink) newID() string {
	id := "item_" + strconv.Itoa(s.nextID)
	s.nextID++
	return id
}

func (s *jsonSink) threadStarted(r appproto.ThreadStartResponse) {
	s.emit(threadStartedEvent{Type: "thread.started", ThreadID: r.Thread.ID})
}

func (s *jsonSink) notification(m appserver.Message, _ *appproto.ThreadTokenUsage) {
	switch p := m.Params.(type) {
	case appproto.TurnNotification:
		if m.Method == appproto.TurnStarted.Name() {
			s.emit(typeOnlyEvent{Type: "turn.started"})
		}
	case appproto.ItemStartedNotification:
		if p.Item.CommandExecution == nil && p.Item.FileChange == nil {
			return
		}
		raw := p.Item.ID()
		id, ok := s.ids[raw]
		if !ok {
			id = s.newID()
			s.ids[raw] = id
		}
		if item := execItem(p.Item, id); item != nil {
			s.emit(itemEvent{Type: "item.started", Item: item})
		}
	case appproto.ItemCompletedNotification:
		raw := p.Item.ID()
		var id string
		switch {
		case p.Item.AgentMessage != nil:
			id = s.newID()
		case p.Item.Reasoning != nil:
			if strings.TrimSpace(strings.Join(p.Item.Reasoning.Summary, "\n")) == "" {
				return
			}
			id = s.newID()
		case p.Item.CommandExecution != nil, p.Item.FileChange != nil:
			var ok bool
			if id, ok = s.ids[raw]; ok {
				delete(s.ids, raw)
			} else {
				id = s.newID()
			}
		default:
			return
		}
		s.emit(itemEvent{Type: "item.completed", Item: execItem(p.Item, id)})
	case appproto.TurnPlanUpdatedNotification:
		items := make([]todoItem, len(p.Plan))
		for i, st := range p.Plan {
			items[i] = todoItem{Text: st.Step, Completed: st.Status == "completed"}
		}
		if s.todo == nil {
			s.todo = &todoListItem{ID: s.newID(), Type: "todo_list", Items: items}
			s.emit(itemEvent{Type: "item.started", Item: s.todo})
		} else {
			s.todo.Items = items
			s.emit(itemEvent{Type: "item.updated", Item: s.todo})
		}
	case appproto.WarningNotification:
		s.emit(itemEvent{Type: "item.completed", Item: errorItem{ID: s.newID(), Type: "error", Message: p.Message}})
	case appproto.ErrorNotification:
		s.lastError = errorText(p.Error)
		s.emit(errorEvent{Type: "error", Message: s.lastError})
	}
}

func (s *jsonSink) turnEnded(t appproto.Turn, u *appproto.ThreadTokenUsage) {
	if s.todo != nil {
		s.emit(itemEvent{Type: "item.completed", Item: s.todo})
		s.todo = nil
	}
	// An item the turn reports that was started and never completed is
	// completed now, in the state the turn gives it.
	for _, it := range t.Items {
		if id, ok := s.ids[it.ID()]; ok {
			delete(s.ids, it.ID())
			if item := execItem(it, id); item != nil {
				s.emit(itemEvent{Type: "item.completed", Item: item})
			}
		}
	}
	switch t.Status {
	case appproto.TurnCompleted:
		var total usage
		if u != nil {
			total = usage{InputTokens: u.Total.InputTokens, CachedInputTokens: u.Total.CachedInputTokens,
				CacheWriteInputTokens: u.Total.CacheWriteInputTokens, OutputTokens: u.Total.OutputTokens,
				ReasoningOutputTokens: u.Total.ReasoningOutputTokens}
		}
		s.emit(turnCompletedEvent{Type: "turn.completed", Usage: total})
	case appproto.TurnFailed:
		msg := s.lastError
		if t.Error != nil {
			msg = errorText(*t.Error)
		}
		if msg == "" {
			msg = "turn failed"
		}
		s.emit(turnFailedEvent{Type: "turn.failed", Error: messageOnly{Message: msg}})
	case appproto.TurnInterrupted:
		// Codex emits nothing for an interrupted turn; the exit code (130)
		// and stderr say what happened.
		fmt.Fprintln(s.errw, "turn interrupted")
	}
}

func (s *jsonSink) notice(msg string) { fmt.Fprintln(s.errw, msg) }

func (s *jsonSink) close() {}

func (s *jsonSink) failure(msg string) {
	fmt.Fprintln(s.errw, "codexd exec:", msg)
	s.emit(errorEvent{Type: "error", Message: msg})
}

// errorText is an error's message with its details, as Codex prints it.
func errorText(e appproto.TurnError) string {
	if e.AdditionalDetails != nil && *e.AdditionalDetails != "" {
		return e.Message + " (" + *e.AdditionalDetails + ")"
	}
	return e.Message
}

// execItem maps an app-server item to its exec form; nil for the kinds
// exec does not show (user messages, plans).
func execItem(it appproto.ThreadItem, id string) any {
	switch {
	case it.AgentMessage != nil:
		return textItem{ID: id, Type: "agent_message", Text: it.AgentMessage.Text}
	case it.Reasoning != nil:
		return textItem{ID: id, Type: "reasoning", Text: strings.Join(it.Reasoning.Summary, "\n")}
	case it.CommandExecution != nil:
		c := it.CommandExecution
		out := ""
		if c.AggregatedOutput != nil {
			out = *c.AggregatedOutput
		}
		return commandItem{ID: id, Type: "command_execution", Command: c.Command, AggregatedOutput: out,
			ExitCode: c.ExitCode, Status: snakeStatus(c.Status)}
	case it.FileChange != nil:
		f := it.FileChange
		changes := make([]fileChange, len(f.Changes))
		for i, c := range f.Changes {
			changes[i] = fileChange{Path: c.Path, Kind: c.Kind.Type}
		}
		status := snakeStatus(f.Status)
		if status == "declined" {
			status = "failed"
		}
		return fileChangeItem{ID: id, Type: "file_change", Changes: changes, Status: status}
	}
	return nil
}

// snakeStatus maps the app-server's camelCase statuses.
func snakeStatus(s string) string {
	if s == "inProgress" {
		return "in_progress"
	}
	return s
}
