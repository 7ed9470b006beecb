package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
)

// The kill -9 tests run this test binary again as an appender process
// (TestMain sees helperEnv) and kill it while it writes.
const (
	helperEnv  = "STORE_TEST_APPENDER" // "mid" or "race"
	helperHome = "STORE_TEST_HOME"
	helperID   = "STORE_TEST_ID"
	// midTurns is how many whole turns "mid" writes before it stops
	// inside the next one.
	midTurns = 3
)

// appenderProcess appends turns to one thread, one record per Append, and
// prints "done N" once turn N's TurnCompleted was appended (and so synced).
// "mid" stops inside turn midTurns, prints "mid" and waits to be killed;
// "race" appends until it is killed.
func appenderProcess() int {
	ctx := context.Background()
	mode := os.Getenv(helperEnv)
	s, err := Open(ctx, os.Getenv(helperHome), Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w, err := s.Create(ctx, ThreadMeta{ID: os.Getenv(helperID), Source: "exec"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; i < 1_000_000; i++ {
		recs := turnRecords(fmt.Sprintf("t%06d", i), 10*i, fmt.Sprintf("question %d", i))
		if mode == "mid" && i == midTurns {
			recs = recs[:4]
		}
		for _, r := range recs {
			r.Time = time.Time{}
			if err := w.Append(r); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if mode == "mid" && i == midTurns {
			fmt.Println("mid")
			io.Copy(io.Discard, os.Stdin) // until killed
			return 0
		}
		fmt.Printf("done %d\n", i)
	}
	return 0
}

// runAppender starts the appender and returns its stdout lines.
func runAppender(t *testing.T, mode, home, id string) (*exec.Cmd, <-chan string, *sync.WaitGroup) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperHome+"="+home, helperID+"="+id)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // the test stopped listening; drain
			}
		}
	}()
	return cmd, lines, &wg
}

// waitFor reads lines until one matches, failing after a generous deadline
// (the appender is slow only on a loaded machine).
func waitFor(t *testing.T, lines <-chan string, match func(string) bool) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the appender exited early")
			}
			if match(l) {
				return
			}
		case <-deadline:
			t.Fatal("the appender made no progress")
		}
	}
}

func kill9(t *testing.T, cmd *exec.Cmd, wg *sync.WaitGroup) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the appender was not killed by SIGKILL: %v", err)
	}
	wg.Wait()
}

func TestKill9MidTurn(t *testing.T) {
	home, id := t.TempDir(), testID(80)
	cmd, lines, wg := runAppender(t, "mid", home, id)
	waitFor(t, lines, func(l string) bool { return l == "mid" })
	kill9(t, cmd, wg)

	e := &env{t: t, home: home, logs: &logSink{}}
	e.open()
	defer e.s.Close()
	th, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.TurnStatus{"completed", "completed", "completed", "interrupted"}
	if got := statuses(th.Turns); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("statuses %v", got)
	}
	for i, turn := range th.Turns {
		// Everything appended made it, the dying turn's items too.
		if len(turn.Items) != 2 || turn.Items[0].(*agent.UserMessage).Content[0].Text != fmt.Sprintf("question %d", i) {
			t.Fatalf("turn %d: %+v", i, turn)
		}
	}
	if len(th.History) != 4 || th.Skipped != 0 || len(e.logs.warnings()) != 0 {
		t.Fatalf("history %d, skipped %d, warnings %v", len(th.History), th.Skipped, e.logs.warnings())
	}
	// A restart resumes it cleanly: the dead turn is sealed, new turns go on.
	_, w, err := e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("after", 1e6, "after the crash")...)
	w.Close()
	th, _ = e.s.Read(bg, id)
	if got := statuses(th.Turns); len(got) != 5 || got[3] != "interrupted" || got[4] != "completed" {
		t.Fatalf("after resume %v", got)
	}
}

func TestKill9WhileAppending(t *testing.T) {
	home, id := t.TempDir(), testID(81)
	cmd, lines, wg := runAppender(t, "race", home, id)
	done := -1
	waitFor(t, lines, func(l string) bool {
		n, err := strconv.Atoi(strings.TrimPrefix(l, "done "))
		if err == nil {
			done = n
		}
		return done >= 30
	})
	kill9(t, cmd, wg)
	for l := range lines { // what it reported before dying
		if n, err := strconv.Atoi(strings.TrimPrefix(l, "done ")); err == nil {
			done = n
		}
	}

	e := &env{t: t, home: home, logs: &logSink{}}
	e.open()
	defer e.s.Close()
	th, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Turns) < done+1 {
		t.Fatalf("%d turns, but %d were reported done", len(th.Turns), done+1)
	}
	for i, turn := range th.Turns {
		last := i == len(th.Turns)-1
		switch {
		case turn.Status == agent.TurnStatusCompleted && len(turn.Items) == 2:
		case last && turn.Status == agent.TurnStatusInterrupted && len(turn.Items) <= 2:
		default:
			t.Fatalf("turn %d of %d: %s with %d items", i, len(th.Turns), turn.Status, len(turn.Items))
		}
	}
	// A kill cannot split one write(2) of a small line, but a torn tail
	// would be skipped, never fatal.
	if th.Skipped > 1 {
		t.Fatalf("skipped %d lines", th.Skipped)
	}
	_, w, err := e.s.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("after", 1e7, "after the crash")...)
	w.Close()
	again, _ := e.s.Read(bg, id)
	if n := len(again.Turns); n != len(th.Turns)+1 || again.Turns[n-1].Status != agent.TurnStatusCompleted || again.Skipped != th.Skipped {
		t.Fatalf("after resume: %v, skipped %d", statuses(again.Turns), again.Skipped)
	}
}
