//go:build linux

package integration

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// The rules that account for the ways codexd's app-server deliberately
// differs from Codex 0.169 (the README's "How the app-server differs from
// Codex 0.169", where each id is in brackets). A rule's fix edits both
// sides of a differing item so that what it accounts for no longer shows;
// whatever still differs afterwards is a defect. A declared rule instead
// accounts for every remaining difference of a session whose header names
// it (for differences whose effects carry over to later steps).
//
// Ids that begin with "pending-" name differences another piece of work is
// fixing; each goes once its fix is on main.
type appRule struct {
	id       string
	fix      func(s *appSession, it *appItem)
	declared bool
}

const execDialPrefix = "failed to connect to exec-server websocket `"

var appRules = []appRule{
	// Not sent by codexd (the README's list of notifications it does not
	// send).
	{id: "not-sent", fix: func(s *appSession, it *appItem) {
		for _, m := range []string{"configWarning", "account/rateLimits/updated", "deprecationNotice", "thread/goal/cleared"} {
			dropCodexNotes(m)(s, it)
		}
	}},
	{id: "model-metadata-warning", fix: dropCodexNotesIf("warning", func(p map[string]any) bool {
		m, _ := p["message"].(string)
		return strings.HasPrefix(m, "Model metadata for `")
	})},
	{id: "config-ignored-keys-warning", fix: dropCodexNotesIf("warning", func(p map[string]any) bool {
		m, _ := p["message"].(string)
		return strings.HasPrefix(m, "Codex is ignoring ")
	})},
	// Token counts depend on the prompt, which is codexd's own.
	{id: "token-counts", fix: func(_ *appSession, it *appItem) {
		for _, v := range []any{it.codex, it.codexd} {
			walkMaps(v, func(m map[string]any) {
				for _, k := range []string{"totalTokens", "inputTokens", "cachedInputTokens", "cacheWriteInputTokens", "outputTokens", "reasoningOutputTokens"} {
					if _, ok := m[k]; ok {
						m[k] = "<tokens>"
					}
				}
			})
		}
	}},

	// Decoding failures other than a missing field or an unknown variant
	// are worded by Go; the code and the prefix are Codex's.
	{id: "go-decode-wording", fix: eachAnswerPair(func(it *appItem, a, b map[string]any) {
		ca, ma, okA := answerError(a)
		cb, mb, okB := answerError(b)
		if !okA || !okB || ca != cb {
			return
		}
		for _, prefix := range []string{"Invalid request: ", "fs/writeFile requires valid base64 dataBase64: "} {
			ra, pa := strings.CutPrefix(ma, prefix)
			_, pb := strings.CutPrefix(mb, prefix)
			if pa && pb && (serdeWording.MatchString(ra) || base64Wording.MatchString(ra)) &&
				!strings.HasPrefix(ra, "missing field ") && !strings.HasPrefix(ra, "unknown variant ") {
				setMessage(a, prefix+"<decode error>")
				setMessage(b, prefix+"<decode error>")
			}
		}
	})},
	// A failed connection to an exec-server names the URL as Codex does;
	// what the dialler says after it is worded by Go.
	{id: "exec-dial-wording", fix: func(_ *appSession, it *appItem) {
		for _, v := range []any{it.codex, it.codexd} {
			walkMaps(v, func(m map[string]any) {
				for _, k := range []string{"message", "error"} {
					if s, ok := m[k].(string); ok {
						if i := strings.Index(s, execDialPrefix); i >= 0 {
							if j := strings.Index(s[i+len(execDialPrefix):], "`: "); j >= 0 {
								m[k] = s[:i+len(execDialPrefix)+j+3] + "<dial error>"
							}
						}
					}
				}
			})
		}
	}},
	// Methods of Codex's that codexd does not serve answer -32601.
	{id: "unserved-methods", fix: eachAnswerPair(func(it *appItem, a, b map[string]any) {
		if code, msg, ok := answerError(b); ok && code == "-32601" && strings.HasSuffix(msg, "` is not supported by codexd") {
			for k := range a {
				delete(a, k)
			}
			for k, v := range b {
				a[k] = deepCopy(v)
			}
		}
	})},
	// model/list lists Codex's catalogue, without its prose (model and
	// service-tier descriptions, migration copy, availability notices,
	// the descriptions of efforts codexd words itself); codexd ships no
	// system skills (Codex installs its own into $CODEX_HOME/skills/.system); config/read reports the settings codexd reads.
	{id: "model-list-copy", fix: eachAnswerPair(func(it *appItem, a, b map[string]any) {
		if it.method != "model/list" {
			return
		}
		for _, x := range []map[string]any{a, b} {
			walkMaps(x["result"], func(m map[string]any) {
				if _, ok := m["displayName"]; ok {
					m["description"], m["availabilityNux"] = "<copy>", "<copy>"
				}
				if u, ok := m["upgradeInfo"].(map[string]any); ok {
					u["migrationMarkdown"] = "<copy>"
				}
				if _, ok := m["reasoningEffort"]; ok || m["id"] == "priority" {
					m["description"] = "<copy>"
				}
			})
		}
	})},
	// experimentalFeature/list lists the flags codexd implements, a few of
	// Codex's 215 (with Codex's stage and default); a cursor past the end
	// names codexd's total.
	{id: "feature-list-subset", fix: eachAnswerPair(func(it *appItem, a, b map[string]any) {
		if it.method != "experimentalFeature/list" {
			return
		}
		ra, _ := a["result"].(map[string]any)
		rb, _ := b["result"].(map[string]any)
		if ra != nil && rb != nil {
			listed := map[any]bool{}
			for _, f := range asList(rb["data"]) {
				if fm, ok := f.(map[string]any); ok {
					listed[fm["name"]] = true
				}
			}
			kept := []any{}
			for _, f := range asList(ra["data"]) {
				if fm, ok := f.(map[string]any); ok && listed[fm["name"]] {
					kept = append(kept, f)
				}
			}
			ra["data"] = kept
		}
		for _, x := range []map[string]any{a, b} {
			if _, msg, ok := answerError(x); ok {
				if i := strings.Index(msg, " exceeds total feature flags "); i >= 0 {
					setMessage(x, msg[:i]+" exceeds total feature flags <total>")
				}
			}
		}
	})},
	// thread/revert: codexd cuts the thread's rollout in place, where
	// Codex writes a new rollout generation, `<rollout>_<uuid>.jsonl`,
	// which is the thread's path from then on (in every answer and
	// notification); codexd gives no backwards cursors; and a revert to a
	// turn the thread lacks is refused before the thread is touched, where
	// Codex unloads and reloads it first (notLoaded, idle), so Codex's
	// statuses just before a thread/reverted may hold such pairs before
	// the revert's own.
	{id: "revert-reload", fix: func(_ *appSession, it *appItem) {
		it.codex = revertedPaths(it.codex, it.codexd)
		if isNotes(it) {
			l, _ := it.codex.([]any)
			for i, n := range l {
				if m, _ := n.(map[string]any); m["method"] != "thread/reverted" {
					continue
				}
				var statuses []int
				for j := i - 1; j >= 0; j-- {
					m, _ := l[j].(map[string]any)
					if m["method"] == "thread/status/changed" {
						statuses = append(statuses, j)
					} else if m["method"] != "warning" {
						break
					}
				}
				if len(statuses) > 2 {
					drop := map[int]bool{}
					for _, j := range statuses[2:] {
						drop[j] = true
					}
					var kept []any
					for j, n := range l {
						if !drop[j] {
							kept = append(kept, n)
						}
					}
					it.codex = kept
				}
				break
			}
			return
		}
		eachAnswerPair(func(it *appItem, a, b map[string]any) {
			if it.method != "thread/revert" {
				return
			}
			for _, x := range []map[string]any{a, b} {
				if r, _ := x["result"].(map[string]any); r != nil {
					r["turnsBackwardsCursor"], r["itemsBackwardsCursor"] = "<cursor>", "<cursor>"
				}
			}
		})(nil, it)
	}},
	{id: "no-system-skills", fix: func(_ *appSession, it *appItem) {
		if it.method == "skills/list" {
			walkMaps(it.codex, func(m map[string]any) {
				list, ok := m["skills"].([]any)
				if !ok {
					return
				}
				kept := []any{}
				for _, sk := range list {
					if sm, ok := sk.(map[string]any); !ok || sm["scope"] != "system" {
						kept = append(kept, sk)
					}
				}
				m["skills"] = kept
			})
		}
	}},
	{id: "config-read", fix: func(s *appSession, it *appItem) {
		if it.method == "config/read" {
			resultMember("config/read", "config")(s, it)
			resultMember("config/read", "layers")(s, it)
			resultMember("config/read", "origins")(s, it)
			eachAnswerPair(func(_ *appItem, a, b map[string]any) {
				ra, _ := a["result"].(map[string]any)
				rb, _ := b["result"].(map[string]any)
				if ra != nil && rb != nil {
					if _, ok := ra["layers"]; !ok && (rb["layers"] == nil || rb["layers"] == "<layers>") {
						delete(rb, "layers")
					}
				}
			})(s, it)
		}
	}},
	// Where codexd reports status changes and token usage among a turn's
	// item events: the sequences of statuses are compared on their own.
	{id: "status-order", fix: func(_ *appSession, it *appItem) {
		if !isNotes(it) {
			return
		}
		split := func(v any) any {
			l, ok := v.([]any)
			if !ok {
				return v
			}
			var statuses, rest []any
			for _, n := range l {
				if m, _ := n.(map[string]any); m["method"] == "thread/status/changed" {
					// A repeat of the status just sent tells a client
					// nothing; Codex sometimes sends one (fork-archive,
					// once in four runs), so repeats do not count.
					if len(statuses) == 0 || canon(statuses[len(statuses)-1]) != canon(m["params"]) {
						statuses = append(statuses, m["params"])
					}
				} else {
					rest = append(rest, n)
				}
			}
			return []any{map[string]any{"method": "(statuses, in order)", "params": statuses}, rest}
		}
		if canon(split(it.codex)) != canon(it.codex) || canon(split(it.codexd)) != canon(it.codexd) {
			a, b := split(it.codex), split(it.codexd)
			la, _ := a.([]any)
			lb, _ := b.([]any)
			if len(la) == 2 && len(lb) == 2 && canon(la[0]) == canon(lb[0]) {
				it.codex, it.codexd = la[1], lb[1]
			}
		}
	}},
	{id: "token-usage-timing", fix: func(s *appSession, it *appItem) {
		dropNotesBoth(it, "thread/tokenUsage/updated")
	}},
	// codexd streams an agent command's output as
	// item/commandExecution/outputDelta; Codex 0.169's unified exec sends
	// them for some commands and not for others, by timing (a CI run saw
	// none for an `echo` and one for the `rm` after it). The output itself
	// is compared in the completed item; the deltas of the agent's commands
	// (source agent, or unifiedExecStartup for exec_command) go on both
	// sides; a user shell's stay.
	{id: "exec-output-deltas", fix: func(_ *appSession, it *appItem) {
		if !isNotes(it) {
			return
		}
		agent := map[string]bool{}
		for _, v := range []any{it.codex, it.codexd} {
			for _, n := range asList(v) {
				m, _ := n.(map[string]any)
				p, _ := m["params"].(map[string]any)
				item, _ := p["item"].(map[string]any)
				if m["method"] == "item/started" && item["type"] == "commandExecution" && item["source"] != "userShell" {
					id, _ := item["id"].(string)
					agent[id] = true
				}
			}
		}
		keep := func(m map[string]any) bool {
			p, _ := m["params"].(map[string]any)
			id, _ := p["itemId"].(string)
			return m["method"] != "item/commandExecution/outputDelta" || !agent[id]
		}
		it.codex, it.codexd = filterNotes(it.codex, keep), filterNotes(it.codexd, keep)
	}},
	// A turn's history in codexd keeps what the turn showed: the
	// commandExecution item of a declined, cancelled or failed approval, and
	// the partial agentMessage of an interrupted or steered stream. Codex's
	// history drops both.
	{id: "history-keeps-partial-items", fix: func(_ *appSession, it *appItem) {
		if isNotes(it) {
			return
		}
		walkMaps(it.codexd, func(m map[string]any) {
			items, ok := m["items"].([]any)
			if !ok || m["itemsView"] == nil {
				return
			}
			var keep []any
			for _, x := range items {
				im, _ := x.(map[string]any)
				switch {
				case im["type"] == "agentMessage" && im["completedAtMs"] == nil && im["startedAtMs"] != nil:
					continue
				case im["type"] == "commandExecution" && im["status"] != "completed":
					if !strings.Contains(canon(it.codex), canon(im["id"])) {
						continue
					}
				}
				keep = append(keep, x)
			}
			if keep == nil {
				keep = []any{}
			}
			m["items"] = keep
		})
	}},
	// Turn and item history is not paged backwards: no backwards cursors
	// on thread/resume, thread/turns/list and thread/items/list.
	{id: "backwards-cursors", fix: func(s *appSession, it *appItem) {
		if it.method == "thread/resume" || it.method == "thread/turns/list" || it.method == "thread/fork" || it.method == "thread/items/list" {
			for _, k := range []string{"itemsBackwardsCursor", "turnsBackwardsCursor", "backwardsCursor"} {
				fillNullFromCodex(k)(s, it)
			}
		}
	}},
	// A command/exec killed by a signal reports 128+N, also on a tty
	// (Codex's pty reports 1).
	{id: "exec-signal-exit-code", fix: eachAnswerPair(func(it *appItem, a, b map[string]any) {
		ra, _ := a["result"].(map[string]any)
		rb, _ := b["result"].(map[string]any)
		if it.method == "command/exec" || strings.HasPrefix(it.where, "line ") {
			if ra != nil && rb != nil && canon(ra["exitCode"]) == "1" {
				if n, err := rb["exitCode"].(json.Number).Int64(); err == nil && n > 128 && n < 160 {
					rb["exitCode"] = ra["exitCode"]
				}
			}
		}
	})},
	// A write the sandbox denies fails with Landlock's "Permission denied"
	// where Codex's bubblewrap gives "Read-only file system".
	{id: "sandbox-denial-text", fix: eachAnswerPair(func(it *appItem, a, b map[string]any) {
		ra, _ := a["result"].(map[string]any)
		rb, _ := b["result"].(map[string]any)
		if ra == nil || rb == nil {
			return
		}
		sa, _ := ra["stderr"].(string)
		sb, _ := rb["stderr"].(string)
		if strings.Contains(sa, ": Read-only file system") && strings.ReplaceAll(sb, ": Permission denied", ": Read-only file system") == sa {
			rb["stderr"] = sa
		}
	})},
	// thread/list names the thread a fork came from; Codex's listing says
	// null.
	{id: "list-forked-from", fix: func(s *appSession, it *appItem) {
		if it.method != "thread/list" {
			return
		}
		walkMaps(it.codexd, func(m map[string]any) {
			if _, ok := m["forkedFromId"]; ok && m["preview"] != nil {
				m["forkedFromId"] = nil
			}
		})
	}},

	// codexd refuses positional (array) params of every method; Codex
	// accepts an empty array for a method whose params all default
	// (account/read, skills/list), and checks collaborationMode/list's
	// capability first.
	{id: "positional-params", fix: eachAnswerPair(func(it *appItem, a, b map[string]any) {
		if !strings.Contains(it.where, `"params":[]`) {
			return
		}
		if _, msg, ok := answerError(b); ok && strings.HasPrefix(msg, "Invalid request: invalid type: sequence, expected struct ") {
			copyAnswer(a, b)
		}
	})},
	// A thread/list limit of 0 lists everything on one page; Codex
	// lists one thread and a cursor.
	{id: "list-limit-zero", fix: func(_ *appSession, it *appItem) {
		if it.method == "thread/list" && strings.Contains(it.where, `"limit":0`) {
			eachAnswerPair(func(it *appItem, a, b map[string]any) { copyAnswer(a, b) })(nil, it)
		}
	}},
	// An empty turn/start input is refused (-32603 "failed to submit turn
	// input: EmptyInput"); Codex 0.169 starts a turn with nothing new.
	// Codex's turn of an empty input may show its start (and end) on the
	// thread before the session ends, or not: its session binds that
	// turn's id as $EMPTY where Codex answers with one, and Codex's
	// notifications of it go.
	{id: "empty-turn-input", fix: func(s *appSession, it *appItem) {
		eachAnswerPair(func(it *appItem, a, b map[string]any) {
			if _, msg, ok := answerError(b); ok && it.method == "turn/start" && msg == "failed to submit turn input: EmptyInput" {
				copyAnswer(a, b)
			}
		})(s, it)
		if isNotes(it) {
			dropCodexTurnNotes(it, "<$EMPTY>")
		}
	}},
	// thread/archive of an archived thread and thread/unarchive of one
	// that is not archived succeed again (and notify again); Codex says
	// "no rollout found" / "no archived rollout found".
	{id: "archive-twice", fix: func(s *appSession, it *appItem) {
		eachAnswerPair(func(it *appItem, a, b map[string]any) {
			if _, msg, ok := answerError(a); ok && (it.method == "thread/archive" && strings.HasPrefix(msg, "no rollout found for thread id ") ||
				it.method == "thread/unarchive" && strings.HasPrefix(msg, "no archived rollout found for thread id ")) && b["result"] != nil {
				copyAnswer(b, a)
			}
		})(s, it)
		if !isNotes(it) {
			return
		}
		dedup := func(v any) any {
			l, ok := v.([]any)
			if !ok {
				return v
			}
			var out []any
			for i, n := range l {
				m, _ := n.(map[string]any)
				if i > 0 && (m["method"] == "thread/archived" || m["method"] == "thread/unarchived") && canon(l[i-1]) == canon(n) {
					continue
				}
				out = append(out, n)
			}
			return out
		}
		it.codexd = dedup(it.codexd)
	}},
	{id: "ephemeral-fork-turns", fix: func(s *appSession, it *appItem) {
		eachAnswerPair(func(it *appItem, a, b map[string]any) {
			if _, msg, ok := answerError(a); ok && it.method == "thread/fork" && msg == "ephemeral paginated thread/fork requires `excludeTurns: true`" {
				copyAnswer(b, a)
			}
		})(s, it)
		if isNotes(it) && it.codex == nil {
			if l, ok := it.codexd.([]any); ok && len(l) == 1 {
				m, _ := l[0].(map[string]any)
				if m["method"] == "thread/started" && lookupOr(m, "params.thread.ephemeral") == true && lookupOr(m, "params.thread.forkedFromId") != nil {
					it.codexd = nil
				}
			}
		}
	}},
	// An interrupted command's item is completed (status failed);
	// Codex leaves it without item/completed.
	{id: "interrupted-command-item", fix: func(_ *appSession, it *appItem) {
		if !isNotes(it) {
			return
		}
		completed := map[string]bool{}
		for _, n := range asList(it.codex) {
			if m, _ := n.(map[string]any); m["method"] == "item/completed" {
				completed[canon(lookupOr(m, "params.item.id"))] = true
			}
		}
		it.codexd = filterNotes(it.codexd, func(m map[string]any) bool {
			return !(m["method"] == "item/completed" && lookupOr(m, "params.item.type") == "commandExecution" &&
				!completed[canon(lookupOr(m, "params.item.id"))] && strings.Contains(canon(it.codex), canon(lookupOr(m, "params.item.id"))))
		})
	}},

	// archive and unarchive refuse a rollout another process writes; the
	// corpus runs one server per CODEX_HOME and cannot show it.
	{id: "app-archive-lock"},
	// Limits of codexd's own that the corpus does not reach: read states
	// kept in memory, bounds on what a model stream may carry.
	{id: "read-state-memory"},
	{id: "stream-bounds"},
	// A background terminal ended by /stop keeps its item open in codexd
	// (the corpus leaves the live terminal alone: when Codex's completion
	// arrives is not something a session can wait for).
	{id: "terminal-item-end"},

	// A collaboration mode the client sent without instructions: Codex
	// reports its built-in mode prompt as the settings' developer
	// instructions, codexd (whose prompts are its own) reports none.
	{id: "mode-instructions", fix: func(_ *appSession, it *appItem) {
		pairMaps(it.codex, it.codexd, func(a, b map[string]any) {
			ca, okA := a["developer_instructions"].(string)
			_, hasB := b["developer_instructions"]
			_, hasEffort := a["reasoning_effort"]
			if okA && hasB && b["developer_instructions"] == nil && hasEffort && ca != "" {
				a["developer_instructions"], b["developer_instructions"] = "<mode instructions>", "<mode instructions>"
			}
		})
	}},

	// codexd refuses a cwd with a NUL byte; Codex stores it, and what
	// follows differs.
	{id: "app-cwd-nul", declared: true},

	// codexd refuses a localImage whose file its turn cannot read (missing,
	// a directory, unreadable, a thread without environment access); Codex
	// runs the turn, and what follows differs.
	{id: "image-missing-refused", declared: true},
	// The default environments of a new thread after the first: codexd
	// lists them by id, Codex 0.169 in its hash map's order, which
	// changes from run to run; both are sorted.
	{id: "default-environments-order", fix: func(_ *appSession, it *appItem) {
		for _, v := range []any{it.codex, it.codexd} {
			walkMaps(v, func(m map[string]any) {
				envs, ok := m["environments"].([]any)
				if !ok || len(envs) < 3 {
					return
				}
				id := func(x any) string {
					e, _ := x.(map[string]any)
					s, _ := e["environmentId"].(string)
					return s
				}
				sort.SliceStable(envs[1:], func(i, j int) bool { return id(envs[1+i]) < id(envs[1+j]) })
			})
		}
	}},
	// codexd keeps the configured writable roots of a workspace-write
	// thread only; Codex 0.169 adds them to the workspace roots of a
	// thread under any sandbox.
	{id: "writable-roots-other-sandbox", declared: true},
}

// pairMaps calls f on each pair of objects at the same place in a and b.
func pairMaps(a, b any, f func(am, bm map[string]any)) {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			return
		}
		f(a, bm)
		for k, x := range a {
			pairMaps(x, bm[k], f)
		}
	case []any:
		bl, ok := b.([]any)
		if !ok {
			return
		}
		for i := range min(len(a), len(bl)) {
			pairMaps(a[i], bl[i], f)
		}
	}
}

// walkMaps calls f on every object in v, outermost first.
func walkMaps(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, x := range v {
			walkMaps(x, f)
		}
	case []any:
		for _, x := range v {
			walkMaps(x, f)
		}
	}
}

func isNotes(it *appItem) bool { return strings.HasPrefix(it.where, "notifications ") }

// dropCodexNotes removes the notifications of method that only Codex sends.
func dropCodexNotes(method string) func(*appSession, *appItem) {
	return dropCodexNotesIf(method, func(map[string]any) bool { return true })
}

// dropCodexTurnNotes removes Codex's notifications of the turn whose masked
// id is turn, with the thread/status/changed just before each of them
// (a thread goes active before its turn starts, and idle before its
// turn/completed).
func dropCodexTurnNotes(it *appItem, turn string) {
	l, _ := it.codex.([]any)
	ofTurn := func(n any) bool {
		m, _ := n.(map[string]any)
		p, _ := m["params"].(map[string]any)
		if id, _ := p["turnId"].(string); id == turn {
			return true
		}
		t, _ := p["turn"].(map[string]any)
		id, _ := t["id"].(string)
		return id == turn
	}
	var keep []any
	for i, n := range l {
		m, _ := n.(map[string]any)
		if ofTurn(n) || m["method"] == "thread/status/changed" && i+1 < len(l) && ofTurn(l[i+1]) {
			continue
		}
		keep = append(keep, n)
	}
	if len(keep) == 0 {
		it.codex = nil
	} else {
		it.codex = keep
	}
}

func dropCodexNotesIf(method string, pred func(params map[string]any) bool) func(*appSession, *appItem) {
	return func(_ *appSession, it *appItem) {
		if !isNotes(it) {
			return
		}
		l, _ := it.codex.([]any)
		var keep []any
		for _, n := range l {
			m, _ := n.(map[string]any)
			p, _ := m["params"].(map[string]any)
			if m["method"] == method && pred(p) {
				continue
			}
			keep = append(keep, n)
		}
		if len(keep) == 0 {
			it.codex = nil
		} else {
			it.codex = keep
		}
		if l, ok := it.codexd.([]any); ok && len(l) == 0 {
			it.codexd = nil
		}
	}
}

// fillNullFromCodex: where codexd's key is null and Codex's is not, at
// the same place, codexd's is given Codex's value.
func fillNullFromCodex(key string) func(*appSession, *appItem) {
	return func(_ *appSession, it *appItem) {
		var fill func(a, b any)
		fill = func(a, b any) {
			switch a := a.(type) {
			case map[string]any:
				bm, ok := b.(map[string]any)
				if !ok {
					return
				}
				for k, av := range a {
					bv, present := bm[k]
					if k == key && present && bv == nil && av != nil {
						bm[k] = deepCopy(av)
						continue
					}
					fill(av, bv)
				}
			case []any:
				bl, ok := b.([]any)
				if !ok {
					return
				}
				for i := range a {
					if i < len(bl) {
						fill(a[i], bl[i])
					}
				}
			}
		}
		fill(it.codex, it.codexd)
	}
}

// base64Wording matches the base64 crate's messages.
var base64Wording = regexp.MustCompile(`^(Invalid symbol |Invalid last symbol |Invalid padding|Invalid input length|Encoded text cannot have a 6-bit remainder)`)

// eachAnswerPair calls f on each pair of answers of a step item, Codex's
// and codexd's at the same position.
// revertedPaths is codex with each string that names a reverted
// thread's rollout generation (`…_<uuid>.jsonl`) replaced by codexd's
// string at the same place when that is the same name without the
// generation.
func revertedPaths(codex, codexd any) any {
	switch a := codex.(type) {
	case string:
		if b, ok := codexd.(string); ok && strings.HasSuffix(a, "_<uuid>.jsonl") && strings.TrimSuffix(a, "_<uuid>.jsonl")+".jsonl" == b {
			return b
		}
	case map[string]any:
		if b, ok := codexd.(map[string]any); ok {
			for k, v := range a {
				if w, ok := b[k]; ok {
					a[k] = revertedPaths(v, w)
				}
			}
		}
	case []any:
		if b, ok := codexd.([]any); ok {
			for i := range a {
				if i < len(b) {
					a[i] = revertedPaths(a[i], b[i])
				}
			}
		}
	}
	return codex
}

func eachAnswerPair(f func(it *appItem, a, b map[string]any)) func(*appSession, *appItem) {
	return func(_ *appSession, it *appItem) {
		if isNotes(it) {
			return
		}
		la, _ := it.codex.([]any)
		lb, _ := it.codexd.([]any)
		for i := range la {
			if i >= len(lb) {
				return
			}
			a, _ := la[i].(map[string]any)
			b, _ := lb[i].(map[string]any)
			if a != nil && b != nil {
				f(it, a, b)
			}
		}
	}
}

func setMessage(a map[string]any, msg string) {
	if e, ok := a["error"].(map[string]any); ok {
		e["message"] = msg
	}
}

// resultMember masks result.member of method's answers on both sides.
func resultMember(method, member string) func(*appSession, *appItem) {
	return eachAnswerPair(func(it *appItem, a, b map[string]any) {
		if it.method != method {
			return
		}
		for _, x := range []map[string]any{a, b} {
			if r, ok := x["result"].(map[string]any); ok {
				if _, ok := r[member]; ok {
					r[member] = "<" + member + ">"
				}
			}
		}
	})
}

func filterNotes(v any, keep func(map[string]any) bool) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	var out []any
	for _, n := range l {
		if m, _ := n.(map[string]any); m != nil && !keep(m) {
			continue
		}
		out = append(out, n)
	}
	if out == nil {
		return nil
	}
	return out
}

func dropNotesBoth(it *appItem, method string) {
	if !isNotes(it) {
		return
	}
	drop := func(m map[string]any) bool { return m["method"] != method }
	it.codex, it.codexd = filterNotes(it.codex, drop), filterNotes(it.codexd, drop)
}

// copyAnswer makes dst a copy of src.
func copyAnswer(dst, src map[string]any) {
	for k := range dst {
		delete(dst, k)
	}
	for k, v := range src {
		dst[k] = deepCopy(v)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func lookupOr(v any, path string) any {
	x, _ := lookupPath(v, path)
	return x
}
