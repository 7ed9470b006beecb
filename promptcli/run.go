package promptcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/appserver"
	"github.com/codexd/codexd/jsonrpc"
)

// Exit codes of Run.
const (
	ExitCompleted   = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitInterrupted = 130
	ExitTerminated  = 143
)

// Run runs the job's turn on core and returns the exit code. Everything
// it starts (the app-server, its client, the thread) is closed before it
// returns; core is the caller's to close.
func (j *Job) Run(ctx context.Context, core agent.Core) int {
	srv, err := appserver.New(appserver.Config{Core: core, Logger: j.opts.Logger})
	if err != nil {
		fmt.Fprintln(j.opts.Stderr, "codexd exec:", err)
		return ExitFailed
	}
	defer srv.Close()
	client, err := srv.NewClient()
	if err != nil {
		fmt.Fprintln(j.opts.Stderr, "codexd exec:", err)
		return ExitFailed
	}
	r := &runner{job: j, c: client}
	if j.opts.JSON {
		r.sink = newJSONSink(j.opts.Stdout, j.opts.Stderr)
	} else {
		r.sink = newHumanSink(j.opts.Stdout, j.opts.Stderr, j.opts.Banner, j.prompt)
	}
	code := r.run(ctx)
	r.sink.close()
	// Closing the client ends the calls still in flight (a deferred
	// turn/interrupt, a turn/start cut short by a second Ctrl-C).
	client.Close()
	r.calls.Wait()
	return code
}

// runner is one run's state. Only the goroutine of run touches it; calls
// made on other goroutines report back through channels.
type runner struct {
	job  *Job
	c    *appserver.Client
	sink sink
	// calls counts the goroutines making client calls.
	calls sync.WaitGroup

	threadID string
	// turnID is known from turn/start's answer or turn/started, whichever
	// comes first.
	turnID string
	// turnStarting: turn/start was sent; turnID may not be known yet.
	turnStarting bool
	// interrupts counts the SIGINTs; pendingInterrupt is one that came
	// before the turn's id was known.
	interrupts       int
	pendingInterrupt bool
	// ended is the turn as turn/completed reported it.
	ended *appproto.Turn
	usage *appproto.ThreadTokenUsage
	// final is the last agent message completed.
	final    string
	hasFinal bool
}

// stopError ends a run early with an exit code.
type stopError struct{ code int }

func (e *stopError) Error() string { return fmt.Sprintf("stopped (exit %d)", e.code) }

func (r *runner) run(ctx context.Context) int {
	o := r.job.opts
	err := r.await(ctx, func(ctx context.Context) error {
		_, err := appserver.Call(ctx, r.c, appproto.Initialize, appproto.InitializeParams{
			ClientInfo: appproto.ClientInfo{Name: o.ClientName, Version: o.ClientVersion},
			Capabilities: &appproto.InitializeCapabilities{ExperimentalAPI: true,
				// What neither output form shows costs nothing to skip.
				OptOutNotificationMethods: []string{
					appproto.CommandOutputDelta.Name(), appproto.TurnDiffUpdated.Name(),
					appproto.ReasoningSummaryTextDelta.Name(), appproto.ReasoningSummaryPartAdded.Name(),
					appproto.ReasoningTextDelta.Name(),
				}},
		})
		return err
	})
	if code, done := r.failed("initialize", err); done {
		return code
	}
	var started appproto.ThreadStartResponse
	err = r.await(ctx, func(ctx context.Context) error {
		var err error
		started, err = appserver.Call(ctx, r.c, appproto.ThreadStart, appproto.ThreadStartParams{Ephemeral: &o.Ephemeral})
		return err
	})
	if code, done := r.failed("thread/start", err); done {
		return code
	}
	r.threadID = started.Thread.ID
	r.sink.threadStarted(started)

	r.turnStarting = true
	var turn appproto.TurnStartResponse
	method := appproto.MethodTurnStart
	err = r.await(ctx, func(ctx context.Context) error {
		var err error
		if t := r.job.review; t != nil {
			method = appproto.MethodReviewStart
			var rv appproto.ReviewStartResponse
			rv, err = appserver.Call(ctx, r.c, appproto.ReviewStart, appproto.ReviewStartParams{ThreadID: r.threadID, Target: *t})
			turn.Turn = rv.Turn
			return err
		}
		turn, err = appserver.Call(ctx, r.c, appproto.TurnStart, appproto.TurnStartParams{
			ThreadID:     r.threadID,
			Input:        []appproto.UserInput{appproto.TextInput(r.job.prompt)},
			OutputSchema: r.job.schema,
		})
		return err
	})
	if code, done := r.failed(method, err); done {
		return code
	}
	r.setTurn(turn.Turn.ID)

	for r.ended == nil {
		select {
		case m := <-r.c.Messages():
			r.handle(m)
		case s := <-o.Signals:
			if code, stop := r.signal(s); stop {
				return code
			}
		case <-ctx.Done():
			r.sink.notice("codexd exec: " + context.Cause(ctx).Error())
			return ExitTerminated
		case <-r.c.Done():
			r.sink.failure("the app-server closed the connection")
			return ExitFailed
		}
	}
	return r.finish()
}

// failed reports a failed request; done says whether the run is over.
func (r *runner) failed(method string, err error) (code int, done bool) {
	if err == nil {
		return 0, false
	}
	var stop *stopError
	if errors.As(err, &stop) {
		return stop.code, true
	}
	r.sink.failure(fmt.Sprintf("%s: %v", method, requestError(err)))
	return ExitFailed, true
}

// requestError is err as a person should read it.
func requestError(err error) string {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Message
	}
	return err.Error()
}

// await runs call on its own goroutine and, until it returns, handles
// messages (the in-process client must be read while a call is in flight)
// and signals. A signal that ends the run makes it return a *stopError.
func (r *runner) await(ctx context.Context, call func(context.Context) error) error {
	done := make(chan error, 1)
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		done <- call(ctx)
	}()
	for {
		select {
		case err := <-done:
			return err
		case m := <-r.c.Messages():
			r.handle(m)
		case s := <-r.job.opts.Signals:
			if code, stop := r.signal(s); stop {
				return &stopError{code}
			}
		case <-ctx.Done():
			r.sink.notice("codexd exec: " + context.Cause(ctx).Error())
			return &stopError{ExitTerminated}
		}
	}
}

// signal acts on a signal; stop says whether the run must end now.
func (r *runner) signal(s os.Signal) (code int, stop bool) {
	if s == syscall.SIGTERM {
		r.sink.notice("codexd exec: terminated")
		return ExitTerminated, true
	}
	r.interrupts++
	switch {
	case r.interrupts > 1:
		r.sink.notice("codexd exec: interrupted again; quitting without waiting for the turn")
		return ExitInterrupted, true
	case !r.turnStarting:
		// No turn to interrupt yet: nothing is lost by leaving.
		return ExitInterrupted, true
	case r.turnID == "":
		r.pendingInterrupt = true
	default:
		r.interrupt()
	}
	r.sink.notice("interrupting the turn (Ctrl-C again to quit at once)")
	return 0, false
}

// setTurn learns the turn's id, and sends an interrupt that was waiting
// for it.
func (r *runner) setTurn(id string) {
	if r.turnID != "" || id == "" {
		return
	}
	r.turnID = id
	if r.pendingInterrupt {
		r.pendingInterrupt = false
		r.interrupt()
	}
}

// interrupt sends turn/interrupt. The app-server answers it only when the
// turn has ended, which the loop learns from turn/completed, so nothing
// waits for the answer.
func (r *runner) interrupt() {
	if r.ended != nil {
		return
	}
	p := appproto.TurnInterruptParams{ThreadID: r.threadID, TurnID: r.turnID}
	errs := r.job.opts.Stderr
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		_, err := appserver.Call(context.Background(), r.c, appproto.TurnInterrupt, p)
		if err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
			fmt.Fprintln(errs, "codexd exec: turn/interrupt:", requestError(err))
		}
	}()
}

// handle takes one message of the client.
func (r *runner) handle(m appserver.Message) {
	if m.ID != nil {
		r.decline(m)
		return
	}
	switch p := m.Params.(type) {
	case appproto.TurnNotification:
		if p.ThreadID != r.threadID {
			return
		}
		if m.Method == appproto.TurnStarted.Name() {
			r.setTurn(p.Turn.ID)
		} else if m.Method == appproto.TurnCompletedN.Name() && (r.turnID == "" || p.Turn.ID == r.turnID) {
			r.setTurn(p.Turn.ID)
			t := p.Turn
			r.ended = &t
			for _, it := range t.Items {
				if it.AgentMessage != nil {
					r.final, r.hasFinal = it.AgentMessage.Text, true
				}
			}
		}
	case appproto.ItemCompletedNotification:
		if p.Item.AgentMessage != nil && p.ThreadID == r.threadID {
			r.final, r.hasFinal = p.Item.AgentMessage.Text, true
		}
	case appproto.ThreadTokenUsageUpdatedNotification:
		if p.ThreadID == r.threadID {
			u := p.TokenUsage
			r.usage = &u
		}
	}
	r.sink.notification(m, r.usage)
}

// decline answers a server request: nobody is there to approve or answer.
func (r *runner) decline(m appserver.Message) {
	switch p := m.Params.(type) {
	case appproto.CommandExecutionRequestApprovalParams:
		r.c.Respond(*m.ID, appproto.CommandExecutionRequestApprovalResponse{
			Decision: appproto.CommandApprovalDecision{Decision: appproto.DecisionDecline}})
		what := "a command"
		if p.Command != nil {
			what = "`" + *p.Command + "`"
		}
		r.sink.notice(fmt.Sprintf("declined running %s: approvals cannot be given in exec mode (see --sandbox and --ask-for-approval)", what))
	case appproto.FileChangeRequestApprovalParams:
		r.c.Respond(*m.ID, appproto.FileChangeRequestApprovalResponse{Decision: appproto.DecisionDecline})
		r.sink.notice("declined a file change: approvals cannot be given in exec mode (see --sandbox and --ask-for-approval)")
	case appproto.ToolRequestUserInputParams:
		r.c.Respond(*m.ID, appproto.ToolRequestUserInputResponse{Answers: map[string]appproto.ToolRequestUserInputAnswer{}})
		qs := make([]string, len(p.Questions))
		for i, q := range p.Questions {
			qs[i] = q.Question
		}
		r.sink.notice("left unanswered (no user in exec mode): " + strings.Join(qs, " / "))
	default:
		r.c.RespondError(*m.ID, &jsonrpc.Error{Code: -32000, Message: m.Method + " is not supported in exec mode"})
		r.sink.notice("refused a request the app-server made: " + m.Method)
	}
}

// finish acts on the ended turn.
func (r *runner) finish() int {
	t := r.ended
	r.sink.turnEnded(*t, r.usage)
	switch t.Status {
	case appproto.TurnCompleted:
		if path := r.job.opts.OutputLastMessage; path != "" {
			if !r.hasFinal {
				r.sink.notice("warning: no agent message to write; " + path + " gets empty content")
			}
			if err := os.WriteFile(path, []byte(r.final), 0o644); err != nil {
				r.sink.failure(fmt.Sprintf("writing the last message: %v", err))
				return ExitFailed
			}
		}
		return ExitCompleted
	case appproto.TurnInterrupted:
		return ExitInterrupted
	}
	return ExitFailed
}
