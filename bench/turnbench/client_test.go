package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/config"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeServer answers the client over pipes, as an app-server on stdio
// would: it reads one request, then writes the given lines.
type fakeServer struct {
	in  *bufio.Reader // what the client wrote
	out io.WriteCloser
}

func newFake(t *testing.T) (*client, *fakeServer) {
	t.Helper()
	// OS pipes, as between the benchmark and a server: writes up to the
	// pipe's size do not wait for the reader.
	cr, sw, err := os.Pipe() // server → client
	if err != nil {
		t.Fatal(err)
	}
	sr, cw, err := os.Pipe() // client → server
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(cw, cr)
	t.Cleanup(func() {
		sw.Close()
		<-c.done
		cr.Close()
		cw.Close()
		sr.Close()
	})
	return c, &fakeServer{in: bufio.NewReader(sr), out: sw}
}

func (f *fakeServer) next(t *testing.T) map[string]any {
	t.Helper()
	line, err := f.in.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the client: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("client wrote %q: %v", line, err)
	}
	return m
}

func (f *fakeServer) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(f.out, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func commandItem(thread, status string, exit int) string {
	return fmt.Sprintf(`{"method":"item/completed","params":{"item":{"type":"commandExecution","id":"c","status":%q,"exitCode":%d,"aggregatedOutput":"x"},"threadId":%q,"turnId":"T"},"emittedAtMs":1}`, status, exit, thread)
}

func TestClientTurn(t *testing.T) {
	c, f := newFake(t)
	ch := c.expectTurn("th1")
	resp, err := c.send("turn/start", turnParams("th1"))
	if err != nil {
		t.Fatal(err)
	}
	req := f.next(t)
	if req["method"] != "turn/start" || req["id"] != float64(1) || req["jsonrpc"] != nil {
		t.Fatalf("request %v", req)
	}
	// A delta for another thread, a long line, a server request (which
	// the client refuses), three commands, then the turn's end.
	f.send(t,
		`{"id":1,"result":{"turn":{"id":"T","status":"inProgress"}}}`,
		`{"method":"item/agentMessage/delta","params":{"threadId":"other","delta":"`+strings.Repeat("x", 3<<20)+`"},"emittedAtMs":1}`,
		`{"method":"item/commandExecution/requestApproval","id":0,"params":{"threadId":"th1"}}`,
	)
	reply := f.next(t)
	if reply["id"] != float64(0) || reply["error"] == nil {
		t.Fatalf("reply to the server request: %v", reply)
	}
	f.send(t,
		commandItem("th1", "completed", 0),
		commandItem("th1", "completed", 0),
		commandItem("other", "failed", 1),
		commandItem("th1", "completed", 0),
		`{"method":"turn/completed","params":{"threadId":"th1","turn":{"id":"T","items":[],"status":"completed","error":null}},"emittedAtMs":1}`,
	)
	if _, err := c.await("turn/start", resp, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	r, err := c.waitTurn(ch, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.check(); err != nil || r.turnID != "T" {
		t.Fatalf("turn %+v: %v", r, err)
	}
	if c.serverRequests != 1 {
		t.Fatalf("server requests %d", c.serverRequests)
	}
}

func TestClientTurnChecks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"failed command", []string{commandItem("th", "completed", 0), commandItem("th", "failed", 1), commandItem("th", "completed", 0)}, "2 commands succeeded and 1 failed"},
		{"too few", []string{commandItem("th", "completed", 0)}, "1 commands succeeded"},
		{"turn failed", nil, `ended "failed"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newFake(t)
			ch := c.expectTurn("th")
			status := "completed"
			if tc.lines == nil {
				status = "failed"
			}
			f.send(t, append(tc.lines, `{"method":"turn/completed","params":{"threadId":"th","turn":{"id":"T","status":"`+status+`","error":{"message":"boom"}}}}`)...)
			r, err := c.waitTurn(ch, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("check = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	c, f := newFake(t)
	resp, _ := c.send("thread/start", nil)
	f.next(t)
	f.send(t, `{"error":{"code":-32600,"message":"nope"},"id":1}`)
	if _, err := c.await("thread/start", resp, 10*time.Second); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("error response: %v", err)
	}
	// A server that exits fails every waiter at once.
	ch := c.expectTurn("th")
	f.out.Close()
	if _, err := c.waitTurn(ch, 10*time.Second); err == nil || !strings.Contains(err.Error(), "closed its stdout") {
		t.Fatalf("after EOF: %v", err)
	}
	if _, err := c.call("x", nil, time.Second); err == nil {
		t.Fatal("call after EOF succeeded")
	}
}

func TestTreeCPUAndStat(t *testing.T) {
	st, ok := readStat(os.Getpid())
	if !ok || st.ppid != os.Getppid() || !strings.Contains(st.comm, "turnbench") {
		t.Fatalf("readStat(self) = %+v, %v", st, ok)
	}
	// Burn a little CPU: the figure grows and never shrinks.
	a := treeCPU(os.Getpid())
	deadline := time.Now().Add(5 * time.Second)
	for treeCPU(os.Getpid()).total() <= a.total() && time.Now().Before(deadline) {
		for i := 0; i < 1e6; i++ {
			_ = fmt.Sprint(i)
		}
	}
	if b := treeCPU(os.Getpid()); b.total() <= a.total() || b.self < a.self {
		t.Fatalf("treeCPU went from %+v to %+v", a, b)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i))
	}
	if p := percentile(ds, 50); p != 50 {
		t.Errorf("p50 = %d", p)
	}
	if p := percentile(ds, 90); p != 90 {
		t.Errorf("p90 = %d", p)
	}
	if p := percentile(ds[:1], 90); p != 100 {
		t.Errorf("p90 of one = %d", p)
	}
	if lo, hi := pairRatios([]time.Duration{10, 20}, []time.Duration{5, 4}); lo != 0.2 || hi != 0.5 {
		t.Errorf("pairRatios = %v, %v", lo, hi)
	}
}

// TestConfigIsCodexdsToo: codexd's own loader reads the config both
// servers get as the benchmark means it (Codex's reading of the same keys
// is checked by every run: its turns reach the mock).
func TestConfigIsCodexdsToo(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(configTOML("http://127.0.0.1:1/v1", "workspace-write")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{CodexHome: dir})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ModelProvider != "mock" || cfg.Provider.BaseURL != "http://127.0.0.1:1/v1" ||
		cfg.ApprovalPolicy != config.ApprovalNever || cfg.SandboxMode != config.SandboxWorkspaceWrite {
		t.Fatalf("codexd reads provider %q at %q, approval %q, sandbox %q", cfg.ModelProvider, cfg.Provider.BaseURL, cfg.ApprovalPolicy, cfg.SandboxMode)
	}
}
