package appserver

import (
	"context"
	"sync"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
)

// gatedCore wraps the scripted core so that a test can hold back chosen
// events of every thread (the core has emitted them; the app-server has not
// seen them yet) and block StartThread, to observe the server in between.
type gatedCore struct {
	*agenttest.Core

	mu        sync.Mutex
	holdIf    func(agent.Event) bool
	released  chan struct{}
	startGate *agenttest.Gate
	started   chan struct{} // one token per StartThread entered
}

func newGatedCore(opts agenttest.Options) *gatedCore {
	return &gatedCore{Core: agenttest.New(opts), released: make(chan struct{}), started: make(chan struct{}, 64)}
}

// hold makes every thread stop delivering at the first event that f
// matches, until release.
func (g *gatedCore) hold(f func(agent.Event) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holdIf = f
	g.released = make(chan struct{})
}

func (g *gatedCore) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holdIf = nil
	close(g.released)
}

func (g *gatedCore) gateFor(ev agent.Event) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.holdIf != nil && g.holdIf(ev) {
		return g.released
	}
	return nil
}

func (g *gatedCore) wrap(l *agent.Loaded, err error) (*agent.Loaded, error) {
	if err != nil {
		return nil, err
	}
	inner := l.Thread
	gt := &gatedThread{Thread: inner, out: make(chan agent.Event)}
	go func() {
		defer close(gt.out)
		for ev := range inner.Events() {
			if ch := g.gateFor(ev); ch != nil {
				<-ch
			}
			gt.out <- ev
		}
	}()
	l.Thread = gt
	return l, nil
}

func (g *gatedCore) StartThread(ctx context.Context, opts agent.StartOptions) (*agent.Loaded, error) {
	g.started <- struct{}{}
	g.mu.Lock()
	gate := g.startGate
	g.mu.Unlock()
	if gate != nil {
		<-gate.Done()
	}
	return g.wrap(g.Core.StartThread(ctx, opts))
}

func (g *gatedCore) ResumeThread(ctx context.Context, id string, o agent.Overrides) (*agent.Loaded, error) {
	return g.wrap(g.Core.ResumeThread(ctx, id, o))
}

func (g *gatedCore) ForkThread(ctx context.Context, id string, opts agent.StartOptions) (*agent.Loaded, error) {
	return g.wrap(g.Core.ForkThread(ctx, id, opts))
}

type gatedThread struct {
	agent.Thread
	out chan agent.Event
}

func (t *gatedThread) Events() <-chan agent.Event { return t.out }
