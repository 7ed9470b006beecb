package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/jsonrpc"
)

// recordingServer serves execserver.Server over WebSocket, as
// execserver.Server.ServeHTTP does, but through a stream that records what
// the client asked for and what the server's processes printed. It is how
// the test knows that a command ran in codexd, not in Codex itself.
//
// With upstream set instead of srv, it is a recording relay in front of an
// exec-server at that ws:// URL (the codexd binary, or Codex's own).
type recordingServer struct {
	srv      *execserver.Server
	upstream string

	mu      sync.Mutex
	conns   int
	methods []string        // every method the clients called or notified, in order
	starts  []startRecord   // every process/start
	output  strings.Builder // every chunk of process/output and process/read, in order
	t0      time.Time
	trace   []string // time, direction and method of every message
}

type startRecord struct {
	ProcessID string            `json:"processId"`
	Argv      []string          `json:"argv"`
	Cwd       string            `json:"cwd"`
	Env       map[string]string `json:"env"`
	Tty       bool              `json:"tty"`
	Sandbox   json.RawMessage   `json:"sandbox"`
}

func newRecordingServer(srv *execserver.Server) *recordingServer {
	return &recordingServer{srv: srv, t0: time.Now()}
}

func newRecordingRelay(upstream string) *recordingServer {
	return &recordingServer{upstream: upstream, t0: time.Now()}
}

func (rs *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rs.upstream != "" {
		rs.relay(w, r)
		return
	}
	if r.URL.Path == "/readyz" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		rs.srv.ServeHTTP(w, r)
		return
	}
	stream, err := jsonrpc.AcceptWebSocket(w, r, 0)
	if err != nil {
		return
	}
	rs.mu.Lock()
	rs.conns++
	rs.mu.Unlock()
	_ = rs.srv.ServeStreamFrom(&recordingStream{Stream: stream, rs: rs}, "websocket", r.RemoteAddr)
}

// relay connects the client to the upstream exec-server and copies
// messages both ways through a recordingStream.
func (rs *recordingServer) relay(w http.ResponseWriter, r *http.Request) {
	up, err := jsonrpc.DialWebSocket(r.Context(), rs.upstream, nil, 0)
	if err != nil {
		http.Error(w, "upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	down, err := jsonrpc.AcceptWebSocket(w, r, 0)
	if err != nil {
		_ = up.Close()
		return
	}
	rs.mu.Lock()
	rs.conns++
	rs.mu.Unlock()
	rec := &recordingStream{Stream: down, rs: rs}
	copyAll := func(dst, src jsonrpc.Stream, done chan<- struct{}) {
		defer close(done)
		for {
			msg, err := src.Read()
			if err != nil {
				return
			}
			if src == rec {
				// Never let a client change files through the upstream
				// (which may be the real Codex): refuse the methods that
				// write or remove.
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(msg, &m) == nil && blockedMethods[m.Method] {
					if len(m.ID) > 0 {
						_ = rec.Write([]byte(`{"id":` + string(m.ID) + `,"error":{"code":-32601,"message":"blocked by the test relay"}}`))
					}
					continue
				}
			}
			if dst.Write(msg) != nil {
				return
			}
		}
	}
	toUp, toDown := make(chan struct{}), make(chan struct{})
	go copyAll(up, rec, toUp)
	go copyAll(rec, up, toDown)
	select {
	case <-toUp:
	case <-toDown:
	}
	_ = up.Close()
	_ = down.Close()
	<-toUp
	<-toDown
}

// blockedMethods are never relayed upstream.
var blockedMethods = map[string]bool{"fs/remove": true, "fs/writeFile": true, "fs/copy": true}

type recordingStream struct {
	jsonrpc.Stream
	rs *recordingServer
}

func (s *recordingStream) Read() ([]byte, error) {
	msg, err := s.Stream.Read()
	if err == nil {
		s.rs.inbound(msg)
	}
	return msg, err
}

func (s *recordingStream) Write(msg []byte) error {
	s.rs.outbound(msg)
	return s.Stream.Write(msg)
}

func (rs *recordingServer) inbound(msg []byte) {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.methods = append(rs.methods, m.Method)
	rs.trace = append(rs.trace, fmt.Sprintf("%8.3fs <- %s", time.Since(rs.t0).Seconds(), m.Method))
	if m.Method == "process/start" {
		var st startRecord
		if json.Unmarshal(m.Params, &st) == nil {
			rs.starts = append(rs.starts, st)
		}
	}
}

func (rs *recordingServer) outbound(msg []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProcessID string `json:"processId"`
			Chunk     []byte `json:"chunk"`
		} `json:"params"`
		Result *struct {
			Chunks []struct {
				Chunk []byte `json:"chunk"`
			} `json:"chunks"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if m.Method != "" {
		rs.trace = append(rs.trace, fmt.Sprintf("%8.3fs -> %s", time.Since(rs.t0).Seconds(), m.Method))
	} else {
		rs.trace = append(rs.trace, fmt.Sprintf("%8.3fs -> response", time.Since(rs.t0).Seconds()))
	}
	switch {
	case m.Method == "process/output":
		rs.output.Write(m.Params.Chunk)
	case m.Result != nil:
		for _, c := range m.Result.Chunks {
			rs.output.Write(c.Chunk)
		}
	}
}

// report returns copies of what was recorded.
func (rs *recordingServer) report() (conns int, methods []string, starts []startRecord, output string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.conns, append([]string(nil), rs.methods...), append([]startRecord(nil), rs.starts...), rs.output.String()
}

// traceLines returns the timed log of messages.
func (rs *recordingServer) traceLines() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.trace...)
}
