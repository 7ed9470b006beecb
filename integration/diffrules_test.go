package integration

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// The deliberate differences between codexd and Codex 0.169 that a client
// can see. Each has an id, which the README's list of deliberate
// differences names in brackets (`[serde-text]`), so that the list and
// this table cannot drift apart: TestDifferentialCorpus fails when one
// holds an id the other lacks.
//
// A difference is explained by a rule in one of two ways. Most rules
// recognise the difference itself, step by step (match). Where a
// difference has effects on later steps (a copy refused here and made
// there leaves different files behind), the sequence declares it
// ("deliberate ID" in the corpus) and declared is set: any difference in
// a sequence that declares the id is put down to it, so such sequences are
// kept to the one point they make. A rule with neither is listed for
// completeness; the corpus cannot show it (a 30 s session TTL, /healthz).
type deliberate struct {
	id       string
	match    func(d *difference, codex, codexd *observation) (ok bool, extra string)
	declared bool
}

var deliberateDifferences = []deliberate{
	{id: "serde-text", match: matchSerdeText},
	{id: "capabilities", match: matchCapabilities},
	{id: "tty-signal-exit-code", match: matchTTYExitCode},
	{id: "concurrent-requests", match: matchConcurrent},
	{id: "http-header-order", match: matchHeaderOrder},
	{id: "blank-frames", match: matchBlankFrame},
	{id: "negative-zero-id", match: matchNegativeZeroID},
	{id: "watch-notifies", match: matchWatchNotifies},
	{id: "unimplemented-methods", match: matchUnimplemented},
	{id: "same-file-copy", declared: true},
	{id: "tty-spawn-quirks", declared: true},
	{id: "sandbox-members", declared: true},
	{id: "session-ttl"},
	{id: "healthz"},
	{id: "http-limits"},
	{id: "safety-refusals"},
}

// explain returns the id of the deliberate difference that accounts for
// d, if any, and what makes it a defect after all (a Go type named in a
// message).
func explain(d *difference, codex, codexd *observation) (string, string) {
	for _, r := range deliberateDifferences {
		if r.match != nil {
			if ok, extra := r.match(d, codex, codexd); ok {
				return r.id, extra
			}
		}
	}
	for _, r := range deliberateDifferences {
		if r.declared && slices.Contains(d.seq.deliberate, r.id) {
			return r.id, ""
		}
	}
	return "", ""
}

// stepAnswers returns the answers and the closed flag of a step value.
func stepAnswers(v any) ([]any, bool, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, false
	}
	a, ok := m["answers"].([]any)
	if !ok && m["answers"] != nil {
		return nil, false, false
	}
	closed, _ := m["closed"].(bool)
	return a, closed, true
}

// answerError returns the code and message of an error answer.
func answerError(a any) (code, msg string, ok bool) {
	m, _ := a.(map[string]any)
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return "", "", false
	}
	c, _ := e["code"].(json.Number)
	s, _ := e["message"].(string)
	return string(c), s, true
}

// serdeWording matches the texts of decode failures written by Codex's
// JSON library (serde_json, and the base64 crate behind its byte fields):
// the only texts codexd may word differently.
var serdeWording = regexp.MustCompile(`^(invalid type: |invalid value: |invalid length |unknown variant |invalid number$|number out of range|Invalid symbol |Invalid last symbol |Invalid padding|Invalid input length|Encoded text cannot have a 6-bit remainder|duplicate field |expected |EOF while parsing|trailing characters|data did not match any variant|duplicate JSON object key|control character|invalid escape|invalid unicode code point|lone leading surrogate|unexpected end of hex escape|recursion limit exceeded|key must be a string|missing field )`)

// codexPrefixes introduce a library's decode failure in a message of
// Codex's own: a frame that did not parse, base64 that fs/writeFile could
// not decode. The prefix must be the same on both sides; the rest is the
// library's wording.
var codexPrefixes = []*regexp.Regexp{
	regexp.MustCompile(`^failed to parse websocket JSON-RPC message from exec-server websocket <peer>: `),
	regexp.MustCompile(`^fs/writeFile requires valid base64 dataBase64: `),
}

// goTypeNames catches messages that speak Go instead of the client's
// terms.
var goTypeNames = regexp.MustCompile(`\bGo\b|execproto|jsonrpc\.|jsontext|\bjson: |\b(u?int(8|16|32|64)?|float64|\[\]byte|\[\]uint8|map\[string\]|interface \{\})\b|reflect|Unmarshal|unmarshal`)

// goTypeProblem says what is wrong with a codexd message, or "".
func goTypeProblem(msg string) string {
	if goTypeNames.MatchString(msg) {
		return "codexd's message names Go types: " + msg
	}
	return ""
}

// splitPrefix returns the Codex prefix of msg (or "") and the rest.
func splitPrefix(msg string) (string, string) {
	for _, re := range codexPrefixes {
		if loc := re.FindStringIndex(msg); loc != nil {
			return msg[:loc[1]], msg[loc[1]:]
		}
	}
	return "", msg
}

// isSerdeText reports whether a Codex message is a library's wording of a
// decode failure. "missing field" is one only behind a prefix: codexd
// words a params member that is missing exactly as Codex does.
func isSerdeText(msg string) bool {
	prefix, rest := splitPrefix(msg)
	if prefix == "" && strings.HasPrefix(rest, "missing field ") {
		return false
	}
	return serdeWording.MatchString(rest)
}

// matchSerdeText: every answer agrees but for the message of an error
// whose Codex text is serde's wording (same code both sides, and the same
// prefix).
func matchSerdeText(d *difference, _, _ *observation) (bool, string) {
	a, ac, ok1 := stepAnswers(d.codex)
	b, bc, ok2 := stepAnswers(d.codexd)
	if !ok1 || !ok2 || ac != bc || len(a) != len(b) {
		return false, ""
	}
	extra := ""
	differs := false
	for i := range a {
		if canon(a[i]) == canon(b[i]) {
			continue
		}
		ca, ma, okA := answerError(a[i])
		cb, mb, okB := answerError(b[i])
		if !okA || !okB || ca != cb || !isSerdeText(ma) {
			return false, ""
		}
		pa, _ := splitPrefix(ma)
		pb, _ := splitPrefix(mb)
		if pa != pb {
			return false, ""
		}
		// The rest of the answer (the id) must agree.
		if canon(withoutMessage(a[i])) != canon(withoutMessage(b[i])) {
			return false, ""
		}
		differs = true
		if p := goTypeProblem(mb); p != "" {
			extra = p
		}
	}
	return differs, extra
}

func withoutMessage(a any) any {
	m, _ := a.(map[string]any)
	out := map[string]any{}
	for k, v := range m {
		if k == "error" {
			e, _ := v.(map[string]any)
			out[k] = e["code"]
			continue
		}
		out[k] = v
	}
	return out
}

// matchCapabilities: initialize and environment/info agree but for the
// capability flags, which say what codexd implements.
func matchCapabilities(d *difference, _, _ *observation) (bool, string) {
	if d.method != "initialize" && d.method != "environment/info" {
		return false, ""
	}
	strip := func(v any) string {
		return regexp.MustCompile(`"capabilities":\{[^}]*\}`).ReplaceAllString(canon(v), `"capabilities":{}`)
	}
	return strip(d.codex) == strip(d.codexd), ""
}

// matchTTYExitCode: a process on a tty killed by signal N exits with 1 in
// Codex (its pty library's mapping) and 128+N in codexd, as on a pipe.
func matchTTYExitCode(d *difference, codex, _ *observation) (bool, string) {
	conn, pid, ok := processOf(d)
	if !ok || !codex.tty[conn+" "+pid] {
		return false, ""
	}
	a := canon(d.codex)
	if !strings.Contains(a, `"exitCode":1,`) && !strings.Contains(a, `"exitCode":1}`) {
		return false, ""
	}
	b := regexp.MustCompile(`"exitCode":1(29|[3-5][0-9])\b`).ReplaceAllString(canon(d.codexd), `"exitCode":1`)
	return a == b, ""
}

// processOf finds the connection and process a difference is about: a
// notes key "A process p1", or a request naming a processId.
func processOf(d *difference) (conn, pid string, ok bool) {
	if c, p, found := strings.Cut(d.where, " process "); found && d.line == 0 {
		return c, p, true
	}
	var m struct {
		Params struct {
			ProcessID *string `json:"processId"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(d.where), &m) != nil || m.Params.ProcessID == nil {
		return "", "", false
	}
	return d.conn, *m.Params.ProcessID, true
}

// matchConcurrent: codexd runs a connection's requests concurrently where
// Codex runs them one at a time, so a pipelined request is answered
// without waiting for a long poll before it, and an id still in flight is
// refused instead of answered twice.
func matchConcurrent(d *difference, _, _ *observation) (bool, string) {
	if strings.HasPrefix(d.where, "await ") {
		return true, ""
	}
	b, _, _ := stepAnswers(d.codexd)
	for _, x := range b {
		if _, m, ok := answerError(x); ok && regexp.MustCompile(`^request id .* is already in flight$`).MatchString(m) {
			return true, ""
		}
	}
	return false, ""
}

// matchHeaderOrder: http/request results agree once headers are sorted by
// name (codexd's order; Go's client keeps no order across names).
func matchHeaderOrder(d *difference, _, _ *observation) (bool, string) {
	if d.method != "http/request" {
		return false, ""
	}
	a := sortHeaders(d.codex)
	return canon(a) == canon(d.codexd), ""
}

func sortHeaders(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if hs, ok := x.([]any); ok && k == "headers" {
				hs = slices.Clone(hs)
				slices.SortStableFunc(hs, func(p, q any) int {
					pn, _ := p.(map[string]any)["name"].(string)
					qn, _ := q.(map[string]any)["name"].(string)
					return strings.Compare(pn, qn)
				})
				out[k] = hs
				continue
			}
			out[k] = sortHeaders(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = sortHeaders(x)
		}
		return out
	}
	return v
}

// matchBlankFrame: a WebSocket frame of nothing but whitespace is a
// keep-alive to codexd (as a blank line is on stdio, for both), and a
// parse error to Codex.
func matchBlankFrame(d *difference, _, _ *observation) (bool, string) {
	if strings.TrimSpace(d.where) != "" || d.line == 0 {
		return false, ""
	}
	b, _, _ := stepAnswers(d.codexd)
	return len(b) == 0, ""
}

// matchNegativeZeroID: codexd refuses -0 as an id (-32600, id -1); Codex
// reads it as 0 and answers id 0, an id the client never sent.
func matchNegativeZeroID(d *difference, _, _ *observation) (bool, string) {
	if !regexp.MustCompile(`"id":-0[,}]`).MatchString(d.where) {
		return false, ""
	}
	b, _, _ := stepAnswers(d.codexd)
	if len(b) != 1 {
		return false, ""
	}
	code, _, ok := answerError(b[0])
	return ok && code == "-32600", ""
}

// matchWatchNotifies: codexd sends fs/missingChanged when a watched path
// appears; Codex 0.169 never did.
func matchWatchNotifies(d *difference, _, _ *observation) (bool, string) {
	return strings.HasSuffix(d.where, " fs/missingChanged") && d.codex == nil, ""
}

// matchUnimplemented: Codex's capability discovery and config reading are
// not implemented; codexd answers -32601 for them in every state.
func matchUnimplemented(d *difference, _, _ *observation) (bool, string) {
	switch d.method {
	case "environmentConfig/read", "capabilities/discoverV2", "capabilityRoots/discoverV1":
	default:
		return false, ""
	}
	b, _, _ := stepAnswers(d.codexd)
	if len(b) != 1 {
		return false, ""
	}
	code, _, ok := answerError(b[0])
	return ok && code == "-32601", ""
}

// readmeDeliberateIDs returns the ids in brackets that the README's list
// of deliberate differences of the exec-server holds.
func readmeDeliberateIDs(readme string) []string {
	return readmeSectionIDs(readme, "Deliberate differences a client can see", "\n## ")
}

// readmeSectionIDs returns the ids in brackets (`[id]`) of the README's
// section that starts at the line holding head and ends at the next line
// that starts with end.
func readmeSectionIDs(readme, head, end string) []string {
	i := strings.Index(readme, head)
	if i < 0 {
		return nil
	}
	section := readme[i:]
	if j := strings.Index(section[len(head):], end); j >= 0 {
		section = section[:len(head)+j]
	}
	var ids []string
	for _, m := range regexp.MustCompile("`\\[([a-z0-9-]+)\\]`").FindAllStringSubmatch(section, -1) {
		ids = append(ids, m[1])
	}
	return ids
}
