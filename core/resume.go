package core

import (
	"context"
	"fmt"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/store"
)

// Resuming and forking: a thread loaded again from its rollout, with the
// overrides a client asks for and the warnings Codex gives when they
// differ from what the thread recorded, and a thread's history copied into
// a new one. Starting and the rest of the thread lifecycle are in core.go.

// ResumeThread loads a stored thread.
func (c *Core) ResumeThread(ctx context.Context, id string, o agent.Overrides) (*agent.Loaded, error) {
	l, warning, err := c.resumeThread(ctx, id, o)
	if t := c.loaded(id); err == nil && t != nil && warning != "" {
		t.q.push("", agent.Warning{Message: warning})
	}
	return l, err
}

// ResumeThreadWarned is ResumeThread handing back the warnings of the
// load (the model warning) rather than queueing them on the thread, so
// that the caller can send them before its answer, as Codex 0.169 does.
func (c *Core) ResumeThreadWarned(ctx context.Context, id string, o agent.Overrides) (*agent.Loaded, []string, error) {
	l, warning, err := c.resumeThread(ctx, id, o)
	if err != nil || warning == "" {
		return l, nil, err
	}
	return l, []string{warning}, nil
}

// resumeThread loads a stored thread; warning is the model warning its
// load calls for, if any.
func (c *Core) resumeThread(ctx context.Context, id string, o agent.Overrides) (*agent.Loaded, string, error) {
	if t := c.loaded(id); t != nil {
		return t.loadedView(), "", nil
	}
	if c.cfg.Store == nil {
		return nil, "", agent.ErrThreadNotFound
	}
	st, w, err := c.cfg.Store.Resume(ctx, id)
	if err != nil {
		return nil, "", err
	}
	// Codex compares against the model of the last turn, not of the last
	// recorded settings: until a turn runs, every resume away from it warns.
	recorded := st.TurnModel
	l, err := c.loadStored(st, w, o, false)
	if err != nil || recorded == "" || l.Info.Model == recorded {
		return l, "", err
	}
	// Codex 0.169's warning, word for word: clients match it.
	return l, fmt.Sprintf("This session was recorded with model `%s` but is resuming with `%s`. "+
		"Consider switching back to `%s` as it may affect Codex performance.", recorded, l.Info.Model, recorded), nil
}

// loadStored loads a thread rebuilt by the store.
func (c *Core) loadStored(st *store.Thread, w store.Writer, o agent.Overrides, noTools bool) (*agent.Loaded, error) {
	s := c.followCwd(o, o.Apply(st.Settings))
	log := c.log.With("thread", st.Info.ID)
	rec := newStoreRecorder(w, log)
	info := st.Info
	info.Path = w.Path()
	// The stored records are let go as they are decoded (decodeHistory):
	// st must not keep them.
	raw := compaction.Replay(st.History)
	clear(st.History)
	t, err := c.load(info, s, normalizeHistory(decodeHistory(raw, log)), st.Turns,
		instructionsOpts{base: st.Meta.BaseInstructions, developer: st.Meta.DeveloperInstructions}, st.Meta.Originator, noTools, rec)
	if err != nil {
		w.Close()
		return nil, err
	}
	t.usage = st.Usage
	t.lastModel = st.TurnModel
	if !sameSettings(s, st.Settings) {
		// The rollout keeps the resume's overrides. No event: Codex sends
		// no thread/settings/updated for them (the resume's answer has
		// the settings).
		t.rec.Event(agent.Event{Time: time.Now(), Msg: agent.SettingsUpdated{Settings: s}})
	}
	return t.loadedView(), nil
}

// ForkThread copies a thread's history into a new thread. With a store,
// the copy is of the source's rollout, as in Codex: a thread that has none
// (no user message yet, or ephemeral) cannot be forked (ErrThreadNotFound),
// so that no fork is reported stored and then never written. An
// ephemeral fork is loaded from the copy and never written.
func (c *Core) ForkThread(ctx context.Context, id string, opts agent.StartOptions) (*agent.Loaded, error) {
	src := c.loaded(id)
	if c.cfg.Store != nil {
		if src != nil && !src.stored() {
			return nil, fmt.Errorf("%w: thread %s has no rollout", agent.ErrThreadNotFound, id)
		}
		if src == nil && opts.Ephemeral {
			return c.forkStoredEphemeral(ctx, id, opts)
		}
	}
	if c.cfg.Store != nil && !opts.Ephemeral {
		// The settings are the source's own: a loaded thread's current
		// ones, or (zero Settings) the stored thread's latest, which the
		// store reads from its rollout. The overrides apply on top.
		var settings agent.Settings
		if src != nil {
			_ = src.rec.Sync()
			settings = c.followCwd(opts.Overrides, opts.Overrides.Apply(src.Settings()))
		}
		st, w, err := c.cfg.Store.Fork(ctx, id, store.ThreadMeta{
			ID: newUUIDv7(), Source: opts.Source, ThreadSource: opts.ThreadSource, Originator: opts.Originator,
			CliVersion: c.cfg.CliVersion, Settings: settings,
			BaseInstructions: opts.BaseInstructions, DeveloperInstructions: opts.DeveloperInstructions,
		})
		if err != nil {
			return nil, err
		}
		return c.loadStored(st, w, opts.Overrides, opts.NoTools)
	}
	if src == nil {
		return nil, agent.ErrThreadNotFound
	}
	src.mu.Lock()
	s := c.followCwd(opts.Overrides, opts.Overrides.Apply(src.settings))
	history := append([]prompt.Item(nil), src.history...)
	preview := src.info.Preview
	src.mu.Unlock()
	turns := src.turns.completed()
	now := time.Now()
	info := agent.ThreadInfo{
		ID: newUUIDv7(), ForkedFromID: id, Preview: preview, Ephemeral: opts.Ephemeral,
		Model: s.Model, ModelProvider: s.ModelProvider, Cwd: s.Cwd, Source: opts.Source,
		ThreadSource: opts.ThreadSource, Originator: opts.Originator, CliVersion: c.cfg.CliVersion,
		CreatedAt: now, UpdatedAt: now, Materialized: len(history) > 0,
	}
	t, err := c.load(info, s, history, turns, instructionsOpts{base: opts.BaseInstructions, developer: opts.DeveloperInstructions}, opts.Originator, opts.NoTools, nopRecorder{})
	if err != nil {
		return nil, err
	}
	return &agent.Loaded{Thread: t, Info: t.snapshotInfo(), History: turns}, nil
}

// forkStoredEphemeral forks a stored thread that is not loaded into an
// ephemeral thread: its history and settings as the rollout has them,
// with the overrides on top; nothing is written.
func (c *Core) forkStoredEphemeral(ctx context.Context, id string, opts agent.StartOptions) (*agent.Loaded, error) {
	st, err := c.cfg.Store.Read(ctx, id)
	if err != nil {
		return nil, err
	}
	s := opts.Overrides.Apply(st.Settings)
	log := c.log.With("fork of", id)
	now := time.Now()
	info := agent.ThreadInfo{
		ID: newUUIDv7(), ForkedFromID: st.Info.ID, Preview: st.Info.Preview, Ephemeral: true,
		Model: s.Model, ModelProvider: s.ModelProvider, Cwd: s.Cwd, Source: opts.Source,
		ThreadSource: opts.ThreadSource, CliVersion: c.cfg.CliVersion, CreatedAt: now, UpdatedAt: now,
		Materialized: st.Info.Materialized,
	}
	base := instructionsOpts{base: opts.BaseInstructions, developer: opts.DeveloperInstructions}
	if base.base == nil && base.developer == nil {
		base = instructionsOpts{base: st.Meta.BaseInstructions, developer: st.Meta.DeveloperInstructions}
	}
	// From the last compaction on, as a resume (loadStored) starts.
	raw := compaction.Replay(st.History)
	clear(st.History)
	t, err := c.load(info, s, normalizeHistory(decodeHistory(raw, log)), st.Turns, base, opts.Originator, opts.NoTools, nopRecorder{})
	if err != nil {
		return nil, err
	}
	t.usage = st.Usage
	return t.loadedView(), nil
}
