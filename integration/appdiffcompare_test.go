//go:build linux

package integration

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// This file turns what an app-server session observed into values that can
// be compared across the two servers. Only what is volatile is masked:
// times, the values the session bound (thread and turn ids, cursors; each
// is shown by its name, so that an id bound in one place must come back in
// the same places), other UUIDs, and the side's directories. Notifications
// are grouped per connection and thread, in arrival order, with the deltas
// of one item joined (where a stream is cut depends on timing).

// appTimeKeys are members whose numbers are times or durations.
var appTimeKeys = map[string]bool{
	"emittedAtMs": true, "startedAtMs": true, "completedAtMs": true, "createdAt": true,
	"updatedAt": true, "recencyAt": true, "startedAt": true, "completedAt": true,
	"durationMs": true, "createdAtMs": true, "modifiedAtMs": true, "sectionEnteredAt": true,
	"resetsAt": true,
}

var (
	rolloutTimeRE = regexp.MustCompile(`rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d`)
	sessionDayRE  = regexp.MustCompile(`sessions/\d{4}/\d\d/\d\d`)
	anyUUIDRE     = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	// The mock numbers its items per request it answered; how many
	// requests a turn took depends on when a steer or interrupt landed.
	mockIDRE = regexp.MustCompile(`\b(msg|call|rs|fc)_mock_\d+`)
	pidRE    = regexp.MustCompile(`^\d+$`)
	// A Debug-printed duration (a timed-out user shell command's output).
	rustDurationRE = regexp.MustCompile(`duration: [0-9.]+(ns|µs|ms|s)\b`)
	// A thread/list backwards cursor is a time.
	isoTimeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

// appMasker masks one side's observation.
type appMasker struct {
	long  []string          // bound values masked where they occur, longest first
	exact map[string]string // value -> "<$NAME>"
}

func newAppMasker(o *appObservation) *appMasker {
	m := &appMasker{exact: map[string]string{}}
	names := make([]string, 0, len(o.vars))
	for k := range o.vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := o.vars[k]
		if v == "" || v == "null" {
			continue
		}
		if _, dup := m.exact[v]; !dup {
			m.exact[v] = "<$" + k + ">"
			if len(v) >= 8 {
				m.long = append(m.long, v)
			}
		}
	}
	sort.Slice(m.long, func(i, j int) bool { return len(m.long[i]) > len(m.long[j]) })
	return m
}

func (m *appMasker) str(s string) string {
	if v, ok := m.exact[s]; ok {
		return v
	}
	for _, v := range m.long {
		s = strings.ReplaceAll(s, v, m.exact[v])
	}
	s = anyUUIDRE.ReplaceAllString(s, "<uuid>")
	s = mockIDRE.ReplaceAllString(s, "${1}_mock_<n>")
	s = rolloutTimeRE.ReplaceAllString(s, "rollout-<time>")
	s = sessionDayRE.ReplaceAllString(s, "sessions/<day>")
	s = rustDurationRE.ReplaceAllString(s, "duration: <duration>")
	return isoTimeRE.ReplaceAllString(s, "<time>")
}

func (m *appMasker) value(v any) any {
	switch v := v.(type) {
	case string:
		return m.str(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = m.value(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if appTimeKeys[k] && x != nil {
				out[k] = "<time>"
				continue
			}
			if p, ok := x.(string); ok && k == "processId" && pidRE.MatchString(p) {
				out[k] = "<pid>" // an OS process id
				continue
			}
			out[m.str(k)] = m.value(x)
		}
		return out
	}
	return v
}

// appItem is one thing compared: a step's messages, or the notifications
// of one thread (or of none) on one connection.
type appItem struct {
	where  string
	line   int
	method string
	codex  any
	codexd any
}

// appItems lists the masked items of both observations, pairwise.
func appItems(codex, codexd *appObservation) []appItem {
	mc, md := newAppMasker(codex), newAppMasker(codexd)
	var items []appItem
	n := max(len(codex.steps), len(codexd.steps))
	for i := 0; i < n; i++ {
		var it appItem
		if i < len(codex.steps) {
			s := codex.steps[i]
			it.line, it.method, it.where = s.line, s.method, fmt.Sprintf("line %d on %s: %s", s.line, s.conn, mc.str(s.desc))
			it.codex = mc.value(s.msgs)
		}
		if i < len(codexd.steps) {
			s := codexd.steps[i]
			if it.where == "" {
				it.line, it.method, it.where = s.line, s.method, fmt.Sprintf("line %d on %s: %s", s.line, s.conn, md.str(s.desc))
			}
			it.codexd = md.value(s.msgs)
		}
		items = append(items, it)
	}
	gc, gd := groupNotes(codex, mc), groupNotes(codexd, md)
	keys := map[string]bool{}
	for k := range gc {
		keys[k] = true
	}
	for k := range gd {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		var a, b any
		if x, ok := gc[k]; ok {
			a = x
		}
		if x, ok := gd[k]; ok {
			b = x
		}
		items = append(items, appItem{where: k, codex: a, codexd: b})
	}
	return items
}

// deltaMethods are notifications whose text is joined per item.
var deltaMethods = map[string]string{
	"item/agentMessage/delta":                   "delta",
	"item/commandExecution/outputDelta":         "delta",
	"item/reasoning/summaryTextDelta":           "delta",
	"item/reasoning/textDelta":                  "delta",
	"item/plan/delta":                           "delta",
	"item/fileChange/outputDelta":               "delta",
	"command/exec/outputDelta":                  "deltaBase64",
	"item/reasoning/summaryPartAdded":           "",
	"item/commandExecution/terminalInteraction": "",
}

// groupNotes groups a side's notifications by connection and thread:
// "notifications on A of <$T>", or "... of no thread".
func groupNotes(o *appObservation, m *appMasker) map[string][]any {
	out := map[string][]any{}
	for _, conn := range o.conns {
		for _, n := range o.notes[conn] {
			method, _ := n["method"].(string)
			p, _ := n["params"].(map[string]any)
			thread := "no thread"
			if p != nil {
				if t, ok := p["threadId"].(string); ok {
					thread = m.str(t)
				} else if th, ok := p["thread"].(map[string]any); ok {
					if t, ok := th["id"].(string); ok {
						thread = m.str(t)
					}
				}
			}
			key := fmt.Sprintf("notifications on %s of %s", conn, thread)
			entry := map[string]any{"method": method, "params": m.value(n["params"])}
			if _, ok := n["emittedAtMs"]; !ok {
				entry["emittedAtMs"] = "absent"
			}
			list := out[key]
			if field, ok := deltaMethods[method]; ok && field != "" && len(list) > 0 {
				last, _ := list[len(list)-1].(map[string]any)
				lp, _ := last["params"].(map[string]any)
				np, _ := entry["params"].(map[string]any)
				if last["method"] == method && lp != nil && np != nil && sameItem(lp, np) {
					joined := joinDelta(field, lp[field], np[field])
					if s, ok := joined.(string); ok {
						// A bound value split across deltas shows whole
						// only once they are joined.
						joined = m.str(s)
					}
					lp[field] = joined
					continue
				}
			}
			if field := deltaMethods[method]; field == "deltaBase64" {
				np, _ := entry["params"].(map[string]any)
				if np != nil {
					np[field] = joinDelta(field, "", np[field])
				}
			}
			out[key] = append(list, entry)
		}
	}
	return out
}

func sameItem(a, b map[string]any) bool {
	for _, k := range []string{"itemId", "processId", "stream", "summaryIndex", "contentIndex"} {
		if canon(a[k]) != canon(b[k]) {
			return false
		}
	}
	return true
}

// joinDelta appends a delta to what came before; base64 deltas are shown
// decoded.
func joinDelta(field string, before, next any) any {
	b, _ := before.(string)
	n, _ := next.(string)
	if field == "deltaBase64" {
		if d, err := base64.StdEncoding.DecodeString(n); err == nil {
			n = string(d)
		}
	}
	return b + n
}

// diffPaths lists where two values differ, as "path: codex … codexd …",
// at most n lines; for lists of notifications whose methods differ, the
// two method sequences.
func diffPaths(a, b any, n int) []string {
	var out []string
	if la, ok := a.([]any); ok {
		if lb, ok := b.([]any); ok && isNoteList(la) && isNoteList(lb) {
			ma, mb := noteMethods(la), noteMethods(lb)
			if canon(ma) != canon(mb) {
				return []string{"methods: codex " + canon(ma), "methods: codexd " + canon(mb)}
			}
		}
	}
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		if len(out) >= n || canon(a) == canon(b) {
			return
		}
		switch x := a.(type) {
		case map[string]any:
			if y, ok := b.(map[string]any); ok {
				keys := map[string]bool{}
				for k := range x {
					keys[k] = true
				}
				for k := range y {
					keys[k] = true
				}
				sorted := make([]string, 0, len(keys))
				for k := range keys {
					sorted = append(sorted, k)
				}
				sort.Strings(sorted)
				for _, k := range sorted {
					va, oka := x[k]
					vb, okb := y[k]
					switch {
					case !oka:
						out = append(out, fmt.Sprintf("%s.%s: only codexd has it: %s", path, k, clip(canon(vb), 300)))
					case !okb:
						out = append(out, fmt.Sprintf("%s.%s: only codex has it: %s", path, k, clip(canon(va), 300)))
					default:
						walk(path+"."+k, va, vb)
					}
				}
				return
			}
		case []any:
			if y, ok := b.([]any); ok && len(x) == len(y) {
				for i := range x {
					walk(fmt.Sprintf("%s[%d]", path, i), x[i], y[i])
				}
				return
			}
		}
		out = append(out, fmt.Sprintf("%s: codex %s, codexd %s", path, clip(canon(a), 400), clip(canon(b), 400)))
	}
	walk("", a, b)
	return out
}

func isNoteList(l []any) bool {
	for _, x := range l {
		m, ok := x.(map[string]any)
		if !ok || m["method"] == nil {
			return false
		}
	}
	return len(l) > 0
}

func noteMethods(l []any) []string {
	var out []string
	for _, x := range l {
		out = append(out, fmt.Sprint(x.(map[string]any)["method"]))
	}
	return out
}
