package execserver

import (
	"strconv"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/jsonrpc"
)

// Requests about one process take effect in the order they arrive, as in
// Codex, which runs a connection's requests one at a time: a terminate
// pipelined behind a start kills what the start started, and a write
// pipelined behind a terminate is refused, however slow the request
// before it is to run. (A fresh-clone CI run saw Codex's differential
// sequence write-after-terminate-tty-and-no-stdin get its write accepted
// and echoed by cat before the terminate killed it.) The hook holds the
// request named until the ones behind it have arrived.
func TestProcessRequestsTakeEffectInArrivalOrder(t *testing.T) {
	for _, hold := range []string{execproto.MethodProcessStart, execproto.MethodProcessTerminate} {
		t.Run(hold, func(t *testing.T) {
			release := make(chan struct{})
			srv, url := newTestServer(t, Config{}, func(s *Server) {
				s.testHookProcess = func(method string) {
					if method == hold {
						select {
						case <-release:
						case <-time.After(deadline):
						}
					}
				}
			})
			w := dialWS(t, url)
			w.send([]byte(`{"id":0,"method":"initialize","params":{"clientName":"order"}}`))
			w.recv()
			w.send([]byte(`{"method":"initialized"}`))
			cwd, _ := json.Marshal(execproto.PathURI(t.TempDir()))
			w.send([]byte(`{"id":1,"method":"process/start","params":{"processId":"t1","argv":["cat"],"cwd":` + string(cwd) + `,"env":{"PATH":"/usr/bin:/bin"},"tty":true}}`))
			w.send([]byte(`{"id":2,"method":"process/terminate","params":{"processId":"t1"}}`))
			w.send([]byte(`{"id":3,"method":"process/write","params":{"processId":"t1","chunk":"aGkK","writeId":"w1"}}`))

			answers := make(map[string]jsontext.Value)
			msgs := make(chan []byte, 64)
			go func() {
				defer close(msgs)
				for b := w.recvOrNil(); b != nil; b = w.recvOrNil() {
					msgs <- b
				}
			}()
			take := func(b []byte) {
				var m struct {
					ID     *jsonrpc.ID    `json:"id"`
					Result jsontext.Value `json:"result"`
					Error  *struct {
						Code    int64  `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(b, &m); err != nil || m.ID == nil {
					return
				}
				if m.Error != nil {
					answers[m.ID.String()] = jsontext.Value(strconv.Itoa(int(m.Error.Code)) + ": " + m.Error.Message)
				} else {
					answers[m.ID.String()] = m.Result
				}
			}
			// Wait until the held request and those behind it are in (a
			// start not held has answered), none of which may take effect
			// before it: an answer to one of them meanwhile is what the
			// test catches.
			need := 3
			if hold == execproto.MethodProcessTerminate {
				need = 2
			}
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			stop := time.After(deadline)
		waiting:
			for {
				select {
				case b := <-msgs:
					take(b)
					if answers["2"] != nil || answers["3"] != nil {
						break waiting
					}
				case <-tick.C:
					if inFlight(srv) == need && (need == 3 || answers["1"] != nil) {
						break waiting
					}
				case <-stop:
					t.Fatal("the requests never arrived")
				}
			}
			close(release)
			for len(answers) < 3 {
				select {
				case b, ok := <-msgs:
					if !ok {
						t.Fatalf("connection closed; answers %v", answers)
					}
					take(b)
				case <-time.After(deadline):
					t.Fatalf("answers: %v", answers)
				}
			}
			want := map[string]string{"1": `{"processId":"t1","sandboxType":"none"}`, "2": `{"running":true}`, "3": "-32603: failed to write to process stdin"}
			for id, v := range want {
				if string(answers[id]) != v {
					t.Errorf("answer %s = %s, want %s", id, answers[id], v)
				}
			}
		})
	}
}

// inFlight is the number of requests srv's one connection has not
// answered.
func inFlight(srv *Server) int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for conn := range srv.conns {
		return conn.InFlight()
	}
	return 0
}
