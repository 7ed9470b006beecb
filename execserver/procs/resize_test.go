package procs

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// A terminal's size is set at start and changed by Resize; CloseStdin ends
// a pipe's input after what was written before it.
func TestResizeAndCloseStdin(t *testing.T) {
	m := NewManager(Config{})
	defer m.Close()
	p, err := m.Start(StartOptions{ID: "tty", Argv: []string{"/bin/sh", "-c", "stty size; read x; stty size"},
		Env: map[string]string{"PATH": "/usr/bin:/bin"}, TTY: true, Rows: 11, Cols: 33})
	if err != nil {
		t.Fatal(err)
	}
	out := waitOutput(t, p, "11 33")
	if err := p.Resize(22, 44); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(context.Background(), "w1", []byte("\n")); err != nil {
		t.Fatal(err)
	}
	out = waitOutput(t, p, "22 44")
	_ = out

	c, err := m.Start(StartOptions{ID: "cat", Argv: []string{"cat"}, Env: map[string]string{"PATH": "/usr/bin:/bin"}, PipeStdin: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Resize(1, 1); err != ErrNotTTY {
		t.Fatalf("resize of a pipe: %v", err)
	}
	if _, err := c.Write(context.Background(), "a", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseStdin(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("cat did not end after its stdin closed")
	}
	if got := collect(c); got != "hello" {
		t.Fatalf("cat printed %q", got)
	}
}

func collect(p *Process) string {
	var b bytes.Buffer
	for _, ev := range p.Events(0, -1).Events {
		if ev.Kind == EventOutput {
			b.Write(ev.Data)
		}
	}
	return b.String()
}

func waitOutput(t *testing.T, p *Process, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		got := collect(p)
		if bytes.Contains([]byte(got), []byte(want)) {
			return got
		}
		if err := p.Wait(ctx, p.NextSeq()-1); err != nil {
			t.Fatalf("waiting for %q, have %q: %v", want, got, err)
		}
	}
}
