package appserver

import (
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
)

// DefaultIdleUnload is how long a thread with no subscriber and no running
// turn stays loaded: Codex 0.169's THREAD_UNLOADING_DELAY.
const DefaultIdleUnload = 30 * time.Minute

// Idle unloading keeps a long-running server's memory flat: a thread
// nobody is subscribed to, with no turn running, is shut down once it has
// been both for the delay, counted from the later of the two (as Codex
// counts it). Every connection then gets thread/status/changed notLoaded
// and thread/closed, and thread/resume loads it again from the store.
//
// The timer only wakes the check; the decision is taken under the thread's
// lock from its state, so a subscriber or a turn that arrives meanwhile
// keeps the thread.

func (s *Server) idleDelay() time.Duration {
	if s.cfg.IdleUnload == 0 {
		return DefaultIdleUnload
	}
	return s.cfg.IdleUnload
}

// idleLocked reports whether the thread may be unloaded for idleness, and
// from when.
func (t *thread) idleLocked() (time.Time, bool) {
	if t.st.unloaded || len(t.st.subscribers) > 0 || t.st.active != nil || len(t.st.requests) > 0 {
		return time.Time{}, false
	}
	since := t.st.lastActivity
	if t.st.noSubsSince.After(since) {
		since = t.st.noSubsSince
	}
	return since.Add(t.srv.idleDelay()), true
}

// armIdleLocked brings the idle timer up to date with the thread's state;
// it is called after whatever can change it (subscriptions, events).
func (t *thread) armIdleLocked() {
	if len(t.st.subscribers) > 0 {
		t.st.noSubsSince = time.Time{}
	} else if t.st.noSubsSince.IsZero() {
		t.st.noSubsSince = time.Now()
	}
	at, idle := t.idleLocked()
	if !idle || t.srv.idleDelay() < 0 {
		t.stopIdleLocked()
		return
	}
	wait := time.Until(at)
	if t.st.idleTimer == nil {
		t.st.idleTimer = time.AfterFunc(wait, t.idleExpired)
	} else {
		t.st.idleTimer.Reset(wait)
	}
}

func (t *thread) stopIdleLocked() {
	if t.st.idleTimer != nil {
		t.st.idleTimer.Stop()
	}
}

// noteActivityLocked records something happening on the thread (an event,
// a submitted turn): the idle delay counts from the last of them.
func (t *thread) noteActivityLocked() { t.st.lastActivity = time.Now() }

// idleExpired runs on the timer's goroutine: if the thread is still idle
// and its time has come, it stops accepting anything (unloaded) and the
// core is asked to shut it down; its listener then unloads it when the
// core's events end, and announces thread/closed.
func (t *thread) idleExpired() {
	t.mu.Lock()
	at, idle := t.idleLocked()
	if !idle {
		t.mu.Unlock()
		return
	}
	if wait := time.Until(at); wait > 0 {
		t.st.idleTimer.Reset(wait)
		t.mu.Unlock()
		return
	}
	t.st.unloaded = true
	t.st.closedIdle = true
	t.mu.Unlock()
	t.srv.log.Debug("app-server: unloading an idle thread", "thread", t.id)
	if _, err := t.th.Submit(background, agent.Shutdown{}); err != nil {
		t.srv.log.Debug("app-server: shutting an idle thread down", "thread", t.id, "err", err)
	}
}

// closedNote is what every connection gets once an idle thread is gone.
func (t *thread) closedNote() *note {
	return newNote(appproto.ThreadClosed.Name(), appproto.ThreadIDNotification{ThreadID: t.id})
}
