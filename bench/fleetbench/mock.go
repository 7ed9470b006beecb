package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/codexd/codexd/mockmodel"
)

// commands are what the mock asks for in every turn, one exec_command per
// model response (as turnbench's turns); then it answers.
var commands = []string{"echo one", "true", "echo three"}

// turnScript: at step N (N tool outputs after the last user message) call
// exec_command with commands[N]; after the last, answer. It never waits.
func turnScript() *mockmodel.Script {
	var s mockmodel.Script
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
		Respond: mockmodel.Response{Output: []mockmodel.Output{{Type: "message", Text: "Done: three commands ran.", Deltas: 3}}},
	})
	return &s
}

// mock serves the mock model in this process, on 127.0.0.1. mockmodel
// keeps every request it answers, so renew swaps in a fresh one between
// phases behind the same listener.
type mock struct {
	cur atomic.Pointer[mockmodel.Server]
	srv *http.Server
	url string
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

func (m *mock) renew() { m.cur.Store(mockmodel.New(mockmodel.Options{Script: turnScript()})) }

func (m *mock) close() { _ = m.srv.Close() }
