package appserver

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/appproto"
)

var bg = context.Background()

// iclient is an in-process client with the same helpers as jclient; every
// message it receives is encoded and checked against Codex's schema too.
type iclient struct {
	t    testing.TB
	name string
	c    *Client
	done chan struct{}

	mu      sync.Mutex
	queue   []*wmsg
	log     []*wmsg
	changed chan struct{}
}

func (e *env) inproc(name string) *iclient {
	e.t.Helper()
	c, err := e.srv.NewClient()
	if err != nil {
		e.t.Fatal(err)
	}
	ic := &iclient{t: e.t, name: name, c: c, done: make(chan struct{}), changed: make(chan struct{}, 1)}
	go ic.read()
	e.t.Cleanup(func() {
		c.Close()
		<-ic.done
	})
	return ic
}

func (ic *iclient) read() {
	defer close(ic.done)
	for {
		select {
		case m := <-ic.c.Messages():
			w := encodeMessage(ic.t, m)
			checkSchema(ic.t, w, "")
			ic.mu.Lock()
			ic.queue = append(ic.queue, w)
			ic.log = append(ic.log, w)
			ic.mu.Unlock()
			select {
			case ic.changed <- struct{}{}:
			default:
			}
		case <-ic.c.Done():
			return
		}
	}
}

// encodeMessage is the JSON a network client would have received.
func encodeMessage(t testing.TB, m Message) *wmsg {
	params, err := json.Marshal(m.Params)
	if err != nil {
		t.Fatalf("encode %s: %v", m.Method, err)
	}
	raw := `{"method":` + strconv.Quote(m.Method)
	if m.ID != nil {
		raw += `,"id":` + m.ID.String()
	}
	raw += `,"params":` + string(params)
	if m.ID == nil {
		raw += `,"emittedAtMs":` + strconv.FormatInt(m.EmittedAtMs, 10)
	}
	raw += "}"
	w := &wmsg{raw: []byte(raw)}
	if err := json.Unmarshal(w.raw, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func (ic *iclient) next(what string, match func(*wmsg) bool) *wmsg {
	ic.t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		ic.mu.Lock()
		for i, m := range ic.queue {
			if match(m) {
				ic.queue = append(ic.queue[:i:i], ic.queue[i+1:]...)
				ic.mu.Unlock()
				return m
			}
		}
		ic.mu.Unlock()
		select {
		case <-ic.changed:
			deadline.Reset(wait)
		case <-deadline.C:
			ic.t.Fatalf("%s: timed out waiting for %s", ic.name, what)
		}
	}
}

func (ic *iclient) note(method string) *wmsg {
	ic.t.Helper()
	return ic.next("notification "+method, func(m *wmsg) bool { return m.Method == method && m.ID == nil })
}

func (ic *iclient) serverRequest(method string) *wmsg {
	ic.t.Helper()
	return ic.next("server request "+method, func(m *wmsg) bool { return m.Method == method && m.ID != nil })
}

func (ic *iclient) logged() []*wmsg {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return append([]*wmsg(nil), ic.log...)
}

func (ic *iclient) initialize() appproto.InitializeResponse {
	ic.t.Helper()
	r, err := Call(bg, ic.c, appproto.Initialize, appproto.InitializeParams{ClientInfo: appproto.ClientInfo{Name: ic.name, Version: "1.0"}})
	if err != nil {
		ic.t.Fatal(err)
	}
	return r
}
