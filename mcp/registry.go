package mcp

import (
	"context"
	"maps"
	"sync"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
)

// Registry knows the configured servers and every thread's Manager: the
// app-server asks it for a thread's servers (mcpServer/tool/call,
// mcpServerStatus/list with a threadId), for a snapshot of the
// configuration's servers when no thread is named, and to reload the
// configuration into every thread's Manager. It hears every thread's
// state changes and passes them, with the thread's id, to its listeners.
type Registry struct {
	opts Options
	// Load re-reads the configured servers (config/mcpServer/reload);
	// nil keeps the servers Registry was made with.
	load func() ([]config.MCPServer, error)

	mu        sync.Mutex
	servers   []config.MCPServer
	threads   map[string]*Manager
	listeners map[int]func(StatusEvent)
	nextL     int
}

// StatusEvent is one state change of one thread's server.
type StatusEvent struct {
	Thread, Server string
	State          State
	Reason         string
}

// NewRegistry makes a registry of servers; opts are every Manager's
// (OnStatus is the registry's own). load, when not nil, re-reads the
// servers for Reload.
func NewRegistry(servers []config.MCPServer, opts Options, load func() ([]config.MCPServer, error)) *Registry {
	return &Registry{opts: opts, load: load, servers: servers, threads: map[string]*Manager{}, listeners: map[int]func(StatusEvent){}}
}

// Servers are the configured servers, by name.
func (r *Registry) Servers() []config.MCPServer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]config.MCPServer(nil), r.servers...)
}

// NewThread makes and starts the Manager of thread id; it leaves the
// registry when closed. elicit answers its servers' elicitations.
func (r *Registry) NewThread(id string, elicit agent.MCPElicitFunc) *Manager {
	r.mu.Lock()
	servers := append([]config.MCPServer(nil), r.servers...)
	r.mu.Unlock()
	opts := r.opts
	opts.Elicit = elicit
	opts.OnStatus = func(server string, st State, reason string) {
		r.announce(StatusEvent{Thread: id, Server: server, State: st, Reason: reason})
	}
	m := New(servers, opts)
	m.onClose = func() {
		r.mu.Lock()
		if r.threads[id] == m {
			delete(r.threads, id)
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.threads[id] = m
	r.mu.Unlock()
	m.Start()
	return m
}

// SetToolApprovalMode makes mode the approval mode of server's tool in
// every thread's Manager and in the threads started from now on, as a
// reload of the configuration that changed only that would, but without
// restarting anything.
func (r *Registry) SetToolApprovalMode(server, tool, mode string) {
	r.mu.Lock()
	ms := make([]*Manager, 0, len(r.threads))
	for _, m := range r.threads {
		ms = append(ms, m)
	}
	for i, c := range r.servers {
		if c.Name == server {
			// A new map: the old one may be shared with a Manager.
			modes := maps.Clone(c.ToolApprovalModes)
			if modes == nil {
				modes = map[string]string{}
			}
			modes[tool] = mode
			r.servers[i].ToolApprovalModes = modes
		}
	}
	r.mu.Unlock()
	for _, m := range ms {
		m.SetToolApprovalMode(server, tool, mode)
	}
}

// Thread is thread id's Manager, or nil.
func (r *Registry) Thread(id string) *Manager {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threads[id]
}

// Listen adds f to the listeners of every thread's state changes (called
// in order per server, with a Manager's lock held: f must not call back
// into it); the returned func removes it.
func (r *Registry) Listen(f func(StatusEvent)) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.nextL
	r.nextL++
	r.listeners[n] = f
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.listeners, n)
	}
}

func (r *Registry) announce(ev StatusEvent) {
	r.mu.Lock()
	fs := make([]func(StatusEvent), 0, len(r.listeners))
	for _, f := range r.listeners {
		fs = append(fs, f)
	}
	r.mu.Unlock()
	for _, f := range fs {
		f(ev)
	}
}

// Reload re-reads the servers and reloads every thread's Manager: new
// servers start, removed ones stop, changed ones restart.
func (r *Registry) Reload() error {
	var servers []config.MCPServer
	if r.load != nil {
		var err error
		if servers, err = r.load(); err != nil {
			return err
		}
	} else {
		servers = r.Servers()
	}
	r.mu.Lock()
	r.servers = servers
	ms := make([]*Manager, 0, len(r.threads))
	for _, m := range r.threads {
		ms = append(ms, m)
	}
	r.mu.Unlock()
	for _, m := range ms {
		m.reloadAnnounce(servers)
	}
	return nil
}

// Snapshot starts a Manager of the configured servers (or only the one
// named), waits for each to be ready or failed, bounded by its startup
// timeout and ctx, and returns it; the caller reads it and closes it.
func (r *Registry) Snapshot(ctx context.Context, only string) *Manager {
	var servers []config.MCPServer
	for _, c := range r.Servers() {
		if only == "" || c.Name == only {
			servers = append(servers, c)
		}
	}
	m := New(servers, r.opts)
	m.Start()
	var wg sync.WaitGroup
	for _, c := range servers {
		if !c.Enabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			timeout := c.StartupTimeout
			if timeout <= 0 {
				timeout = DefaultStartupTimeout
			}
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			m.Wait(wctx, c.Name)
		}()
	}
	wg.Wait()
	return m
}
