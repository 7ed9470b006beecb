package mcp

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/config"
)

// everything returns the entry point of @modelcontextprotocol/server-everything
// (MCP_SERVER_EVERYTHING names its directory; .ci/run installs it), or
// skips saying why.
func everything(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the reference MCP server cannot run")
	}
	dirs := []string{os.Getenv("MCP_SERVER_EVERYTHING"), "/work/codex-npm/node_modules/@modelcontextprotocol/server-everything"}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, "dist", "index.js"); fileExists(p) {
			return p
		}
	}
	t.Skip("@modelcontextprotocol/server-everything is not installed (set MCP_SERVER_EVERYTHING to its directory; .ci/run installs it with npm)")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func exerciseEverything(t *testing.T, m *Manager, name string) {
	t.Helper()
	waitState(t, m, name, StateReady)
	have := map[string]string{}
	for _, tl := range m.Tools() {
		have[tl.Name] = tl.Callable
	}
	if have["get-sum"] != "get_sum" || have["echo"] != "echo" {
		t.Fatalf("tools: %v", have)
	}
	if out, err := call(t, m, name, "echo", `{"message":"hello everything"}`); err != nil || !strings.Contains(out, "hello everything") {
		t.Fatalf("echo: %q %v", out, err)
	}
	if out, err := call(t, m, name, "get-sum", `{"a":2,"b":40}`); err != nil || !strings.Contains(out, "42") {
		t.Fatalf("get-sum: %q %v", out, err)
	}
	var mu sync.Mutex
	var progress []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.Call(ctx, name, "trigger-long-running-operation", json.RawMessage(`{"duration":1,"steps":3}`), func(s string) {
		mu.Lock()
		progress = append(progress, s)
		mu.Unlock()
	})
	mu.Lock()
	got := slices.Clone(progress)
	mu.Unlock()
	// Over HTTP the last notification may come after the result (and is
	// then dropped: no progress callback runs once Call returned).
	if err != nil || res.IsError || len(got) < 2 || got[0] != "1/3" {
		t.Fatalf("long-running: %+v %v, progress %v", res, err, got)
	}
	list, err := m.ListResources(ctx, name, "")
	if err != nil || !strings.Contains(list, `"server":"`+name+`"`) || !strings.Contains(list, `"uri":`) {
		t.Fatalf("resources: %.300s %v", list, err)
	}
	var l listPayload
	_ = json.Unmarshal([]byte(list), &l)
	uri, _ := l.Resources[0]["uri"].(string)
	read, err := m.ReadResource(ctx, name, uri)
	if err != nil || !strings.Contains(read, `"contents":[`) {
		t.Fatalf("read %s: %.300s %v", uri, read, err)
	}
	tmpl, err := m.ListResourceTemplates(ctx, name, "")
	if err != nil || !strings.Contains(tmpl, `"uriTemplate"`) {
		t.Fatalf("templates: %.300s %v", tmpl, err)
	}
	// Elicitation: the server asks, our answer goes back.
	res, err = m.Call(ctx, name, "trigger-elicitation-request", nil, nil)
	if err != nil {
		// A hang here was once a late progress callback blocking the
		// session's handlers; the goroutines tell what it is.
		buf := make([]byte, 1<<20)
		t.Logf("goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		t.Fatalf("elicitation: %v", err)
	}
	b, _ := json.Marshal(res.Content)
	if !strings.Contains(string(b), "Ada") {
		t.Fatalf("elicitation answer not seen by the server: %s", b)
	}
}

func elicitAccept(_ context.Context, e Elicitation) ElicitAnswer {
	if e.Mode != "form" || len(e.RequestedSchema) == 0 {
		return ElicitAnswer{Action: "decline"}
	}
	return ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}
}

func TestEverythingStdio(t *testing.T) {
	js := everything(t)
	m := New([]config.MCPServer{{Name: "everything", Command: "node", Args: []string{js, "stdio"}, Enabled: true}}, Options{Elicit: elicitAccept})
	defer m.Close()
	m.Start()
	exerciseEverything(t, m, "everything")
}

func TestEverythingStreamableHTTP(t *testing.T) {
	js := everything(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command("node", js, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Wait for the port, polling the connection (the server prints nothing
	// on stdout to wait on).
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := New([]config.MCPServer{{Name: "web", URL: "http://" + ln.Addr().String() + "/mcp", Enabled: true}}, Options{Elicit: elicitAccept})
	defer m.Close()
	m.Start()
	exerciseEverything(t, m, "web")
}
