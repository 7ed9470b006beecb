package promptcli

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/config"
)

// The first Ctrl-C interrupts the turn; the run ends 130 once the turn has
// ended interrupted, with what was answered so far ended by a newline.
func TestInterrupt(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		e := newEnv(t)
		rt := e.open(config.LoadOptions{})
		out := newSyncBuffer()
		sigs := make(chan os.Signal, 1)
		done := make(chan result, 1)
		go func() {
			// 10 deltas a second apart: the turn is still streaming when
			// the signal comes, however slow the machine.
			done <- runOn(t, rt.Core, Options{Prompt: "MOCK:slow=1000", JSON: jsonOut, Stdout: out, Signals: sigs})
		}()
		out.waitWrite(t) // the first delta, or thread.started with --json
		sigs <- os.Interrupt
		var r result
		select {
		case r = <-done:
		case <-time.After(wait):
			t.Fatal("the run did not end")
		}
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
		if r.code != ExitInterrupted || !strings.HasSuffix(r.stderr, "interrupting the turn (Ctrl-C again to quit at once)\nturn interrupted\n") {
			t.Fatalf("json=%v: exit %d\nstderr:\n%s", jsonOut, r.code, r.stderr)
		}
		got := out.String()
		if jsonOut {
			// As Codex: an interrupted turn ends with no event.
			if s := sigs2(t, got); !slices.Equal(s, []string{"thread.started", "turn.started"}) {
				t.Errorf("events %q", s)
			}
		} else if !strings.HasPrefix(got, "This") || !strings.HasSuffix(got, "\n") || strings.Contains(got, "steer it.") {
			t.Errorf("stdout = %q, want a part of the answer and a newline", got)
		}
	}
}

func sigs2(t *testing.T, out string) []string { return sigs(decodeEvents(t, out)) }

// stubbornCore's threads ignore interrupts, as a turn stuck somewhere
// would: only quitting ends the run.
type stubbornCore struct{ *agenttest.Core }

func (c stubbornCore) StartThread(ctx context.Context, o agent.StartOptions) (*agent.Loaded, error) {
	l, err := c.Core.StartThread(ctx, o)
	if err == nil {
		l.Thread = stubbornThread{l.Thread}
	}
	return l, err
}

type stubbornThread struct{ agent.Thread }

func (t stubbornThread) Submit(ctx context.Context, op agent.Op) (string, error) {
	if _, ok := op.(agent.Interrupt); ok {
		return "", nil
	}
	return t.Thread.Submit(ctx, op)
}

// hangingTurn streams a little of its answer, then waits for the end of
// the turn (which only shutting the thread down brings).
func hangingTurn(t *agenttest.Turn) {
	id := t.NewID()
	if t.Emit(agent.ItemStarted{Item: &agent.AgentMessage{ID: id}}) && t.Emit(agent.AgentMessageDelta{ItemID: id, Delta: "Thinking hard"}) {
		_ = t.Wait(agenttest.NewGate())
	}
}

func TestSecondInterruptQuits(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		core := stubbornCore{agenttest.New(agenttest.Options{Turn: hangingTurn})}
		out := newSyncBuffer()
		errb := newSyncBuffer()
		sigs := make(chan os.Signal, 2)
		done := make(chan result, 1)
		go func() { done <- runOn(t, core, Options{Prompt: "hi", Stdout: out, Stderr: errb, Signals: sigs}) }()
		out.waitWrite(t)
		want := ExitTerminated
		if sig == os.Interrupt {
			sigs <- os.Interrupt // ignored by the turn
			want = ExitInterrupted
		}
		sigs <- sig
		select {
		case r := <-done:
			if r.code != want || out.String() != "Thinking hard\n" {
				t.Errorf("%v: exit %d, stdout %q\nstderr:\n%s", sig, r.code, out.String(), errb.String())
			}
		case <-time.After(wait):
			t.Fatalf("%v: the run did not end", sig)
		}
		if sig == os.Interrupt && !strings.HasSuffix(errb.String(), "quitting without waiting for the turn\n") {
			t.Errorf("stderr:\n%s", errb.String())
		}
		if err := core.Close(); err != nil {
			t.Error(err)
		}
	}
}

// A Ctrl-C before the turn exists ends the run at once, or, if turn/start
// is already on its way, interrupts the turn as soon as it exists: 130
// either way.
func TestInterruptBeforeTurn(t *testing.T) {
	core := agenttest.New(agenttest.Options{Turn: hangingTurn})
	defer core.Close()
	sigs := make(chan os.Signal, 1)
	sigs <- os.Interrupt
	if r := runOn(t, core, Options{Prompt: "hi", Signals: sigs}); r.code != ExitInterrupted {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

// Every server request is answered at once with the refusal that loses
// nothing: commands and changes declined, questions left unanswered.
func TestDeclinesEveryRequest(t *testing.T) {
	var mu sync.Mutex
	var decisions []string
	note := func(s string) {
		mu.Lock()
		decisions = append(decisions, s)
		mu.Unlock()
	}
	turn := func(t *agenttest.Turn) {
		d, err := t.ExecApproval(agent.ExecApprovalRequest{CallID: "c1", Command: "rm -rf build", Cwd: "/w",
			Decisions: []agent.Decision{agent.Accept, agent.Decline, agent.Cancel}})
		if err != nil {
			return
		}
		note("exec:" + string(d.Decision))
		p, err := t.PatchApproval(agent.PatchApprovalRequest{CallID: "c2", Reason: "write outside"})
		if err != nil {
			return
		}
		note("patch:" + string(p.Decision))
		a, err := t.AskUser(agent.UserInputRequest{CallID: "c3", Questions: []agent.Question{{ID: "q", Header: "Pick", Question: "Which one?"}}})
		if err != nil {
			return
		}
		note("answers:" + strings.Repeat("x", len(a.Answers)))
		t.AgentMessage(t.NewID(), "done")
	}
	core := agenttest.New(agenttest.Options{Turn: turn})
	defer core.Close()
	r := runOn(t, core, Options{Prompt: "hi"})
	if r.code != ExitCompleted || r.stdout != "done\n" {
		t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if want := []string{"exec:decline", "patch:decline", "answers:"}; !slices.Equal(decisions, want) {
		t.Errorf("decisions %q, want %q", decisions, want)
	}
	for _, want := range []string{
		"declined running `rm -rf build`: approvals cannot be given in exec mode",
		"declined a file change: approvals cannot be given in exec mode",
		"left unanswered (no user in exec mode): Which one?",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
