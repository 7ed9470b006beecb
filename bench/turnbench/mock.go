package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/codexd/codexd/mockmodel"
)

// commands are what the mock asks for, one exec_command per model
// response; the fourth response is the final answer.
var commands = []string{"echo one", "true", "echo three"}

const answer = "Done: three commands ran."

// turnScript is the mock's script: at step N (N tool outputs after the
// last user message) it calls exec_command with commands[N]; after the
// last one it answers. It never waits.
func turnScript() *mockmodel.Script {
	var s mockmodel.Script
	if mcpTurn {
		// -mcp-turn: one call of the first MCP server's echo tool, in its
		// namespace as the model names it, then the answer.
		step := 0
		s.Rules = append(s.Rules, mockmodel.Rule{
			Name: "mcp call",
			When: mockmodel.Match{Step: &step},
			Respond: mockmodel.Response{Output: []mockmodel.Output{{
				Type: "function_call", Namespace: "mcp__bench0", Name: "echo", Arguments: json.RawMessage(`{"text":"one"}`),
			}}},
		})
		s.Rules = append(s.Rules, mockmodel.Rule{
			Name:    "answer",
			Respond: mockmodel.Response{Output: []mockmodel.Output{{Type: "message", Text: answer, Deltas: 3}}},
		})
		return &s
	}
	for i, cmd := range commands {
		step := i
		args, _ := json.Marshal(map[string]any{"cmd": cmd, "yield_time_ms": 10000})
		s.Rules = append(s.Rules, mockmodel.Rule{
			Name: fmt.Sprintf("call %d", i+1),
			When: mockmodel.Match{Step: &step},
			Respond: mockmodel.Response{Output: []mockmodel.Output{{
				Type: "function_call", Name: "exec_command", Arguments: args,
			}}},
		})
	}
	s.Rules = append(s.Rules, mockmodel.Rule{
		Name:    "answer",
		Respond: mockmodel.Response{Output: []mockmodel.Output{{Type: "message", Text: answer, Deltas: 3}}},
	})
	return &s
}

// mock serves the project's mock model (package mockmodel) with
// turnScript, in this process: its CPU is the benchmark's, not a
// server's. mockmodel keeps every request it answers (for tests to
// inspect); renew replaces it with a fresh one between measurements so
// that what it keeps stays small. The listener, and so the URL in both
// servers' config, stays the same.
type mock struct {
	cur      atomic.Pointer[mockmodel.Server]
	requests atomic.Int64 // answered by earlier instances
	srv      *http.Server
	url      string
}

func startMock() (*mock, error) {
	m := &mock{}
	m.renew()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m.url = "http://" + ln.Addr().String() + "/v1"
	m.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.cur.Load().ServeHTTP(w, r)
	})}
	go m.srv.Serve(ln)
	return m, nil
}

// renew starts a fresh mock model; requests in flight finish on the old
// one.
func (m *mock) renew() {
	old := m.cur.Swap(mockmodel.New(mockmodel.Options{Script: turnScript()}))
	if old != nil {
		m.requests.Add(int64(len(old.Requests())))
	}
}

// answered is how many requests the mock has answered so far.
func (m *mock) answered() int64 {
	return m.requests.Load() + int64(len(m.cur.Load().Requests()))
}

func (m *mock) close() { _ = m.srv.Close() }
