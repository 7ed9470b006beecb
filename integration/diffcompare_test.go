package integration

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// This file turns what a run observed into values that can be compared
// across servers: volatile parts are masked (scratch paths, session ids,
// peer addresses, times, the environment's machine-specific members),
// base64 payloads are decoded so that differences read as text, and each
// process's notifications are summarised with their invariants checked.

// masker replaces what differs between two runs of the same sequence.
type masker struct {
	scratch string
	httpURL string
	sids    map[string]string
	// exact keeps process/read chunks and seq numbers as they came;
	// otherwise the chunks are joined per stream and nextSeq is masked,
	// since where output is cut depends on timing.
	exact bool
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	peerRE = regexp.MustCompile(`(websocket )127\.0\.0\.1:[0-9]+`)
)

func (m *masker) str(s string) string {
	if m.scratch != "" {
		s = strings.ReplaceAll(s, m.scratch, "$S")
	}
	if m.httpURL != "" {
		s = strings.ReplaceAll(s, m.httpURL, "$HTTP")
		s = strings.ReplaceAll(s, strings.TrimPrefix(m.httpURL, "http://"), "$HTTPHOST")
	}
	s = uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		if v, ok := m.sids[u]; ok {
			return v
		}
		v := fmt.Sprintf("<session%d>", len(m.sids)+1)
		m.sids[u] = v
		return v
	})
	return peerRE.ReplaceAllString(s, "${1}<peer>")
}

// value masks v in place of its strings, and the members that are times
// or machine-specific.
func (m *masker) value(v any) any {
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
			switch k {
			case "createdAtMs", "modifiedAtMs":
				out[k] = "<time>"
				continue
			}
			out[k] = m.value(x)
		}
		return out
	}
	return v
}

// decodedText shows a base64 payload as text (or as base64 again when it
// is not UTF-8), so that differences in reports read naturally.
func decodedText(b64 any) any {
	s, ok := b64.(string)
	if !ok {
		return b64
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return map[string]any{"undecodable": s}
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return map[string]any{"base64": s}
}

// transformAnswer decodes the payloads of an answer and masks the
// members that describe the machine rather than the protocol.
func transformAnswer(method string, ans map[string]any, exact bool) {
	res, _ := ans["result"].(map[string]any)
	if res == nil {
		return
	}
	switch method {
	case "process/read":
		chunks, _ := res["chunks"].([]any)
		if exact {
			for _, c := range chunks {
				if c, ok := c.(map[string]any); ok {
					c["chunk"] = decodedText(c["chunk"])
				}
			}
			break
		}
		joined := map[string]string{}
		for _, c := range chunks {
			if c, ok := c.(map[string]any); ok {
				stream, _ := c["stream"].(string)
				s, _ := c["chunk"].(string)
				b, _ := base64.StdEncoding.DecodeString(s)
				joined[stream] += string(b)
			}
		}
		res["chunks"] = joined
		if _, ok := res["nextSeq"]; ok {
			res["nextSeq"] = "<seq>"
		}
	case "fs/readFile":
		res["dataBase64"] = decodedText(res["dataBase64"])
	case "fs/readBlock":
		res["chunk"] = decodedText(res["chunk"])
	case "http/request":
		res["bodyBase64"] = decodedText(res["bodyBase64"])
		if hs, ok := res["headers"].([]any); ok {
			for _, h := range hs {
				if h, ok := h.(map[string]any); ok && h["name"] == "date" {
					h["value"] = "<date>"
				}
			}
		}
	case "initialize":
		if env, ok := res["environmentInfo"].(map[string]any); ok {
			maskEnv(env)
		}
	case "environment/info":
		maskEnv(res)
	}
}

// maskEnv hides what describes the machine and the server's install:
// where it runs, its home and its own helper directories.
func maskEnv(env map[string]any) {
	for _, k := range []string{"cwd", "userHomeDir", "providerId", "prependPathDirs"} {
		if _, ok := env[k]; ok {
			env[k] = "<machine>"
		}
	}
}

// summariseNotes records, per process, what its notifications said, and
// checks their invariants: seq goes up by one, at most one exited and one
// closed, closed last. It also records fs/missingChanged and
// http/request/bodyDelta notifications. It returns the processes seen.
func summariseNotes(conn string, notes []json.RawMessage, obs *observation) map[string]bool {
	type proc struct {
		out     map[string]*strings.Builder
		exits   []any
		closed  bool
		lastSeq int64
		seqs    int
	}
	procs := map[string]*proc{}
	var order []string
	type body struct {
		data   bytes.Buffer
		deltas int
		done   bool
		err    any
		seq    int64
	}
	bodies := map[string]*body{}
	var watches []any
	var other []any
	for _, raw := range notes {
		var n struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&n) != nil {
			continue
		}
		switch n.Method {
		case "process/output", "process/exited", "process/closed":
			pid, _ := n.Params["processId"].(string)
			p := procs[pid]
			if p == nil {
				p = &proc{out: map[string]*strings.Builder{}}
				procs[pid] = p
				order = append(order, pid)
			}
			seq, err := n.Params["seq"].(json.Number).Int64()
			where := fmt.Sprintf("connection %s, process %q", conn, pid)
			if err != nil {
				obs.violations = append(obs.violations, where+": a notification without an integer seq")
			} else {
				if p.seqs > 0 && seq != p.lastSeq+1 {
					obs.violations = append(obs.violations, fmt.Sprintf("%s: seq %d after %d", where, seq, p.lastSeq))
				}
				p.lastSeq = seq
				p.seqs++
			}
			if p.closed {
				obs.violations = append(obs.violations, fmt.Sprintf("%s: %s after process/closed", where, n.Method))
			}
			switch n.Method {
			case "process/output":
				stream, _ := n.Params["stream"].(string)
				b := p.out[stream]
				if b == nil {
					b = &strings.Builder{}
					p.out[stream] = b
				}
				chunk, _ := n.Params["chunk"].(string)
				data, _ := base64.StdEncoding.DecodeString(chunk)
				b.Write(data)
			case "process/exited":
				p.exits = append(p.exits, map[string]any{"exitCode": n.Params["exitCode"], "sandboxDenied": n.Params["sandboxDenied"]})
			case "process/closed":
				if len(p.exits) == 0 {
					obs.violations = append(obs.violations, where+": process/closed without process/exited before it")
				}
				p.closed = true
			}
		case "fs/missingChanged":
			watches = append(watches, n.Params)
		case "http/request/bodyDelta":
			rid, _ := n.Params["requestId"].(string)
			b := bodies[rid]
			if b == nil {
				b = &body{}
				bodies[rid] = b
			}
			if b.done {
				obs.violations = append(obs.violations, fmt.Sprintf("connection %s, http/request %q: a delta after the final one", conn, rid))
			}
			if seq, err := n.Params["seq"].(json.Number).Int64(); err != nil || seq != b.seq+1 {
				obs.violations = append(obs.violations, fmt.Sprintf("connection %s, http/request %q: delta seq %v after %d", conn, rid, n.Params["seq"], b.seq))
			} else {
				b.seq = seq
			}
			s, _ := n.Params["deltaBase64"].(string)
			data, _ := base64.StdEncoding.DecodeString(s)
			b.data.Write(data)
			b.deltas++
			if d, _ := n.Params["done"].(bool); d {
				b.done = true
				b.err = n.Params["error"]
			}
		default:
			other = append(other, map[string]any{"method": n.Method, "params": n.Params})
		}
	}
	seen := map[string]bool{}
	for _, pid := range order {
		p := procs[pid]
		seen[pid] = true
		sum := map[string]any{"closed": p.closed, "exits": p.exits}
		for stream, b := range p.out {
			sum[stream] = b.String()
		}
		if p.exits == nil {
			sum["exits"] = []any{}
		}
		obs.notes[fmt.Sprintf("%s process %s", conn, pid)] = sum
	}
	for rid, b := range bodies {
		obs.notes[fmt.Sprintf("%s http body %s", conn, rid)] = map[string]any{"body": b.data.String(), "done": b.done, "error": b.err}
	}
	if watches != nil {
		obs.notes[conn+" fs/missingChanged"] = watches
	}
	if other != nil {
		obs.notes[conn+" other notifications"] = other
	}
	return seen
}

// maskObservation applies m to everything obs holds, and decodes payloads.
func maskObservation(obs *observation, m *masker) {
	for i := range obs.steps {
		st := &obs.steps[i]
		st.desc = m.str(st.desc)
		for j, a := range st.answers {
			st.answers[j] = maskAnswer(a, m)
		}
	}
	keys := make([]string, 0, len(obs.notes))
	for k := range obs.notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := obs.notes[k]
		if l, ok := v.([]any); ok && strings.HasSuffix(k, "unawaited answers") {
			for i, a := range l {
				l[i] = maskAnswer(a, m)
			}
			continue
		}
		obs.notes[k] = m.value(v)
	}
}

func maskAnswer(a any, m *masker) any {
	w, ok := a.(map[string]any)
	if !ok {
		return m.value(a)
	}
	ans, ok := w["answer"].(map[string]any)
	if !ok {
		return m.value(a)
	}
	method, _ := w["method"].(string)
	transformAnswer(method, ans, m.exact)
	return m.value(ans)
}

// canon is the canonical JSON of a value, for comparison and reports.
func canon(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// difference is one place where the two servers' observations differ.
type difference struct {
	seq    *sequence
	line   int    // corpus line of the step, 0 for the end state
	where  string // what was sent, or which end state
	conn   string // the connection of the step
	method string // the request's method, if the step was a request
	codex  any
	codexd any
	// deliberate names the listed deliberate difference that explains it,
	// empty when it is a defect.
	deliberate string
	// extra says what a deliberate rule found wrong on codexd's side (a Go
	// type named in a message), which makes it a defect after all.
	extra string
}

// compare lists the differences between what Codex and codexd showed.
func compare(seq *sequence, codex, codexd *observation) []difference {
	var diffs []difference
	n := max(len(codex.steps), len(codexd.steps))
	for i := 0; i < n; i++ {
		var a, b *stepObs
		if i < len(codex.steps) {
			a = &codex.steps[i]
		}
		if i < len(codexd.steps) {
			b = &codexd.steps[i]
		}
		if a == nil || b == nil {
			d := difference{seq: seq, where: "step count"}
			if a != nil {
				d.line, d.where, d.codex = a.line, a.desc, canon(a.answers)
			}
			if b != nil {
				d.line, d.where, d.codexd = b.line, b.desc, canon(b.answers)
			}
			diffs = append(diffs, d)
			continue
		}
		av, bv := stepValue(a), stepValue(b)
		if reflect.DeepEqual(av, bv) {
			continue
		}
		diffs = append(diffs, difference{seq: seq, line: a.line, where: a.desc, conn: a.conn, method: a.method, codex: av, codexd: bv})
	}
	keys := map[string]bool{}
	for k := range codex.notes {
		keys[k] = true
	}
	for k := range codexd.notes {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		av, bv := codex.notes[k], codexd.notes[k]
		if reflect.DeepEqual(av, bv) {
			continue
		}
		diffs = append(diffs, difference{seq: seq, where: k, codex: av, codexd: bv})
	}
	for i := range diffs {
		diffs[i].deliberate, diffs[i].extra = explain(&diffs[i], codex, codexd)
	}
	return diffs
}

func stepValue(s *stepObs) any {
	return map[string]any{"answers": s.answers, "closed": s.closed}
}
