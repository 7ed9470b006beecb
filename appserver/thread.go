package appserver

import (
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// thread is a loaded thread: the core's Thread, the state clients can
// observe, and the listener that keeps the two consistent.
//
// Invariants:
//   - st changes only under mu. The listener holds mu while it applies one
//     event (or command) and builds what must be sent; handlers that must
//     be ordered with the events (turn/start, turn/interrupt, resume) hold
//     mu while they check, submit and answer.
//   - Only the listener goroutine sends thread notifications and server
//     requests, after releasing mu, in the order it built them; so every
//     subscriber sees them in event order, and a slow client holds back
//     the listener, never a handler waiting for mu.
//   - A handler's answer sent under mu precedes every notification of the
//     events applied after it.
type thread struct {
	srv     *Server
	id      string
	th      agent.Thread
	created time.Time // immutable: orders thread/loaded/list

	mu sync.Mutex
	st threadState

	cmdMu sync.Mutex
	cmds  []command     // posted by other goroutines, run by the listener
	wake  chan struct{} // 1-buffered: there are commands
	done  chan struct{} // closed when the listener has returned
}

type threadState struct {
	info     agent.ThreadInfo
	settings agent.Settings
	status   appproto.ThreadStatus
	// subscribers in subscription order.
	subscribers []*session
	// history holds the completed turns, as the listener saw them end.
	history []histTurn
	active  *activeTurn
	// lastTerminalTurnID is the last turn that ended.
	lastTerminalTurnID string
	// interrupts are the turn/interrupt requests waiting for their turn to
	// end.
	interrupts []pendingInterrupt
	// requests are the unresolved server requests of the thread.
	requests []*serverRequest
	usage    *agent.TokenUsageInfo
	// unloaded: the thread accepts nothing more (its listener has ended,
	// or it is shutting down for idleness; see idle.go).
	unloaded bool
	// closedIdle: it was unloaded for idleness (thread/closed follows).
	closedIdle bool
	// lastActivity and noSubsSince (zero while it has subscribers) time
	// the idle unload; idleTimer wakes its check.
	lastActivity time.Time
	noSubsSince  time.Time
	idleTimer    *time.Timer
}

// pendingInterrupt is a turn/interrupt waiting for its turn to end.
type pendingInterrupt struct {
	call   *call
	turnID string
}

// activeTurn is the running turn and its items so far.
type activeTurn struct {
	id        string
	kind      string
	startedAt time.Time
	items     []*itemView
	byID      map[string]*itemView
	lastAgent string // id of the last completed agent message
	completed int    // items completed so far
}

func (a *activeTurn) item(id string) *itemView { return a.byID[id] }

// snapshot returns the running turn as it stands, items included.
func (a *activeTurn) snapshot() appproto.Turn {
	items := make([]appproto.ThreadItem, 0, len(a.items))
	for _, v := range a.items {
		items = append(items, wireItem(v.item, v))
	}
	return appproto.Turn{ID: a.id, RootTurnID: ptr(a.id), Items: items, ItemsView: appproto.ItemsFull,
		Status: appproto.TurnInProgress, StartedAt: unixSec(a.startedAt)}
}

// toHist is the turn as kept once it ended.
func (a *activeTurn) toHist(tc agent.TurnCompleted, at time.Time) histTurn {
	// An ended turn lists its items in the order they completed, as
	// Codex's history (its rollout) does: a plan-mode plan, which starts
	// after its message but completes before it, comes first. Items that
	// never completed follow, in the order they started.
	views := append([]*itemView(nil), a.items...)
	sort.SliceStable(views, func(i, j int) bool {
		di, dj := views[i].doneSeq, views[j].doneSeq
		if di == 0 || dj == 0 {
			return di != 0 && dj == 0
		}
		return di < dj
	})
	items := make([]agent.Item, 0, len(views))
	times := make(map[string]*itemView, len(views))
	for _, v := range views {
		items = append(items, v.item)
		times[v.item.ItemID()] = v
	}
	end := tc.CompletedAt
	if end.IsZero() {
		end = at
	}
	return histTurn{Turn: agent.Turn{ID: a.id, Status: tc.Status, Items: items, Error: tc.Error, StartedAt: a.startedAt, CompletedAt: end}, views: times}
}

// histTurn is a completed turn, with the times of its items when the
// listener saw them (nil for turns loaded from the core's history).
type histTurn struct {
	agent.Turn
	views map[string]*itemView
}

func histFrom(ts []agent.Turn) []histTurn {
	out := make([]histTurn, len(ts))
	for i, t := range ts {
		out[i] = histTurn{Turn: t}
	}
	return out
}

func (h histTurn) wire(view string) appproto.Turn { return wireTurnWith(h.Turn, view, h.views) }

// command is work posted to a thread's listener.
type command interface{ run(t *thread, out *outbox) }

// cmdDropSession: a connection closed.
type cmdDropSession struct{ sess *session }

// loadThread registers a loaded thread and starts its listener. The
// returned thread's lock is held, so that the caller can subscribe and
// answer before the first event is applied.
func (s *Server) loadThread(l *agent.Loaded) (*thread, bool) {
	t := &thread{srv: s, id: l.Thread.ID(), th: l.Thread, created: l.Info.CreatedAt, wake: make(chan struct{}, 1), done: make(chan struct{})}
	t.st = threadState{info: l.Info, settings: l.Thread.Settings(), status: appproto.ThreadStatus{Type: appproto.StatusIdle},
		history: histFrom(l.History), usage: l.Usage, lastActivity: time.Now()}
	s.mu.Lock()
	if old := s.threads[t.id]; old != nil {
		s.mu.Unlock()
		old.mu.Lock()
		return old, false
	}
	if s.closed {
		s.mu.Unlock()
		return nil, false
	}
	s.threads[t.id] = t
	s.listeners.Add(1)
	t.mu.Lock()
	s.mu.Unlock()
	t.armIdleLocked()
	go t.listen()
	return t, true
}

// listen applies the core's events and posted commands until the thread
// shuts down.
func (t *thread) listen() {
	defer t.srv.listeners.Done()
	defer close(t.done)
	events := t.th.Events()
	var out outbox
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.unload()
				return
			}
			t.mu.Lock()
			t.noteActivityLocked()
			t.apply(ev, &out)
			t.armIdleLocked()
			t.mu.Unlock()
		case <-t.wake:
			t.cmdMu.Lock()
			cmds := t.cmds
			t.cmds = nil
			t.cmdMu.Unlock()
			t.mu.Lock()
			for _, c := range cmds {
				c.run(t, &out)
			}
			t.armIdleLocked()
			t.mu.Unlock()
		}
		out.flush()
	}
}

// post hands c to the listener; it never blocks.
func (t *thread) post(c command) {
	t.cmdMu.Lock()
	t.cmds = append(t.cmds, c)
	t.cmdMu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// unload forgets the thread once the core has shut it down; every
// connection learns it is no longer loaded.
func (t *thread) unload() {
	t.mu.Lock()
	t.st.unloaded = true
	subs := t.st.subscribers
	t.st.subscribers = nil
	var out outbox
	for _, r := range t.st.requests {
		t.withdrawLocked(r, &out)
	}
	t.st.requests = nil
	for _, pi := range t.st.interrupts {
		out.respond(pi.call, appproto.EmptyResponse{}, nil)
	}
	t.st.interrupts = nil
	t.setStatusLocked(appproto.ThreadStatus{Type: appproto.StatusNotLoaded}, &out)
	if t.st.closedIdle {
		// As Codex: notLoaded, then thread/closed, to every connection.
		out.toAll(t.srv, t.closedNote())
	}
	t.stopIdleLocked()
	t.mu.Unlock()
	t.srv.mu.Lock()
	if t.srv.threads[t.id] == t {
		delete(t.srv.threads, t.id)
	}
	t.srv.mu.Unlock()
	for _, s := range subs {
		s.unsubscribe(t)
	}
	out.flush()
}

// shutdown asks the core to shut the thread down and waits for the
// listener to end.
func (t *thread) shutdown() {
	_, _ = t.th.Submit(background, agent.Shutdown{})
	<-t.done
}

// subscribeLocked adds sess to the subscribers (and the thread to the
// session's); false if it was subscribed already.
func (t *thread) subscribeLocked(sess *session) bool {
	if t.st.unloaded || !sess.subscribe(t) {
		return false
	}
	t.st.subscribers = append(t.st.subscribers, sess)
	t.armIdleLocked()
	return true
}

// unsubscribeLocked removes sess; it reports whether it was subscribed.
// Server requests that no subscriber is left to answer are withdrawn and
// the core told.
func (t *thread) unsubscribeLocked(sess *session, out *outbox) bool {
	i := slices.Index(t.st.subscribers, sess)
	if i < 0 {
		return false
	}
	t.st.subscribers = slices.Delete(t.st.subscribers, i, i+1)
	sess.unsubscribe(t)
	t.orphanedRequestsLocked(sess, out)
	t.armIdleLocked()
	return true
}

func (c cmdDropSession) run(t *thread, out *outbox) {
	if i := slices.Index(t.st.subscribers, c.sess); i >= 0 {
		t.st.subscribers = slices.Delete(t.st.subscribers, i, i+1)
	}
	t.orphanedRequestsLocked(c.sess, out)
	kept := t.st.interrupts[:0]
	for _, pi := range t.st.interrupts {
		if pi.call.sess != c.sess {
			kept = append(kept, pi)
		}
	}
	t.st.interrupts = kept
}

// setStatusLocked changes the thread's status and tells every
// initialized connection when it changed.
func (t *thread) setStatusLocked(st appproto.ThreadStatus, out *outbox) {
	if t.st.status.Equal(st) {
		return
	}
	t.st.status = st
	out.toAll(t.srv, newNote(appproto.ThreadStatusChanged.Name(),
		appproto.ThreadStatusChangedNotification{ThreadID: t.id, Status: st}))
}

// toSubscribers queues n for every subscriber.
func (t *thread) toSubscribersLocked(out *outbox, method string, params any) {
	if len(t.st.subscribers) == 0 {
		return
	}
	n := newNote(method, params)
	for _, s := range t.st.subscribers {
		out.note(s, n)
	}
}

// wireLocked is the thread as clients see it now; with turns, its
// history and, if one is running, the active turn with its items so far.
func (t *thread) wireLocked(withTurns bool) appproto.Thread {
	var turns []appproto.Turn
	if withTurns {
		turns = make([]appproto.Turn, 0, len(t.st.history)+1)
		for _, h := range t.st.history {
			turns = append(turns, h.wire(appproto.ItemsFull))
		}
		if t.st.active != nil {
			turns = append(turns, t.st.active.snapshot())
		}
	}
	settings := t.st.settings
	return wireThread(t.st.info, t.st.status, &settings, turns)
}

// outbox collects what the listener (or a handler) must send once the
// thread's lock is released, in order.
type outbox struct {
	items []outItem
}

type outItem struct {
	sess *session
	note *note
	req  *outRequest
	rid  int64
	call *call // a deferred answer
	res  any
	err  error
}

func (o *outbox) note(s *session, n *note) { o.items = append(o.items, outItem{sess: s, note: n}) }

func (o *outbox) toAll(srv *Server, n *note) {
	for _, s := range srv.initializedSessions() {
		o.note(s, n)
	}
}

func (o *outbox) request(s *session, id int64, r *outRequest) {
	o.items = append(o.items, outItem{sess: s, req: r, rid: id})
}

func (o *outbox) respond(c *call, res any, err error) {
	o.items = append(o.items, outItem{call: c, res: res, err: err})
}

// flush sends everything, in order, and empties the box.
func (o *outbox) flush() {
	for i := range o.items {
		it := &o.items[i]
		switch {
		case it.call != nil:
			it.call.respond(it.res, it.err)
		case it.note != nil:
			it.sess.send(it.note)
		case it.req != nil:
			if err := it.sess.out.request(it.rid, it.req); errors.Is(err, jsonrpc.ErrSlowPeer) {
				it.sess.slowPeer()
			} else if err != nil {
				it.sess.srv.log.Debug("app-server: server request not sent", "method", it.req.method, "err", err)
			}
		}
		*it = outItem{}
	}
	o.items = o.items[:0]
}

func sortThreads(ts []*thread) {
	slices.SortFunc(ts, func(a, b *thread) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		if a.id < b.id {
			return -1
		}
		return 1
	})
}
