//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	_ "image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/imageinput/imagetest"
	"github.com/codexd/codexd/mockmodel"
)

// TestRequestDifferential compares what the model is sent: codexd's
// app-server and `codex app-server` 0.169 each run the same sessions
// against a mock model of their own that records every request, and the
// requests are compared structurally, one by one: the tools (names, kinds,
// parameter schemas, grammar syntax), the input items (types, roles, keys,
// and for messages the block of each content part: its tag, and the
// environment context's masked fields), the request members, the
// client_metadata and turn-metadata keys, and the headers that matter to
// the API. Volatile values (ids, dates, paths, cache keys) and the prose
// (base instructions, permissions text, tool descriptions, the patch
// grammar's definition) are masked. A difference fails the test unless a
// rule of reqRules allows it; each rule's id is in the README's list of
// the model request's differences.
//
// Session, per model: a command (MOCK:exec), a patch (a custom
// apply_patch call), a turn with a local image, one with an image whose
// header claims 60000×60000 pixels, one at detail "low" (a missing one is
// refused by turn/start: the app differential's image-missing session),
// view_image of a whole 12000×12000 PNG, of the 60000×60000 header, of a
// missing file and of a directory (the texts that replace an image, and
// view_image's answers as the mock quotes them, are compared word for
// word), a turn after the cwd,
// sandbox and approval policy changed, a turn on another model (gpt-5.4;
// not from the code-mode model), a turn of the thread resumed by a new
// server process, and (but for the code-mode model) one after two more
// resumes, to gpt-5.5 and then naming no model.
// Models: gpt-5.5 under workspace-write, codex-auto-review (code mode)
// under read-only, and a model without metadata under danger-full-access.
func TestRequestDifferential(t *testing.T) {
	codex := codexBin(t)
	if !inNetns() {
		t.Setenv("CODEXD_REQDIFF_BIN", buildCodexd(t))
		runInNetns(t, "TestRequestDifferential", 4*time.Minute)
		return
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
	codexd := os.Getenv("CODEXD_REQDIFF_BIN")
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ids := readmeSectionIDs(string(readme), "### How the model request differs from Codex 0.169", "\n## ")
	for _, r := range reqRules {
		if !contains(ids, r.id) {
			t.Errorf("rule %s is not in the README's list of the model request's differences", r.id)
		}
	}
	cases := []struct{ model, sandbox string }{
		{"gpt-5.5", "workspace-write"},
		{"codex-auto-review", "read-only"},
		{"mystery-model", "danger-full-access"},
	}
	root := t.TempDir()
	var wg sync.WaitGroup
	results := make([][2][]*mockmodel.Exchange, len(cases))
	errs := make([][2]error, len(cases))
	for i, c := range cases {
		for k, bin := range []string{codex, codexd} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dir := filepath.Join(root, fmt.Sprintf("%d-%d", i, k))
				results[i][k], errs[i][k] = reqRunSession(bin, dir, c.model, c.sandbox)
			}()
		}
	}
	wg.Wait()
	if dump := os.Getenv("CODEXD_REQDIFF_DUMP"); dump != "" {
		// Every request body of both sides, for a look by hand.
		for i, c := range cases {
			for k, side := range []string{"codex", "codexd"} {
				for n, ex := range results[i][k] {
					name := fmt.Sprintf("%s-%s-%s-%02d.json", strings.ReplaceAll(c.model, "/", "_"), c.sandbox, side, n+1)
					if err := os.WriteFile(filepath.Join(dump, name), ex.Body, 0o644); err != nil {
						t.Error(err)
					}
				}
			}
		}
	}
	used := map[string]int{}
	for i, c := range cases {
		name := c.model + "/" + c.sandbox
		if errs[i][0] != nil || errs[i][1] != nil {
			t.Errorf("%s: codex: %v; codexd: %v", name, errs[i][0], errs[i][1])
			continue
		}
		a, b := results[i][0], results[i][1]
		if len(a) != len(b) {
			t.Errorf("%s: Codex sent %d requests, codexd %d", name, len(a), len(b))
		}
		for n := 0; n < min(len(a), len(b)); n++ {
			sa := reqShape(a[n], filepath.Join(root, fmt.Sprintf("%d-0", i)))
			sb := reqShape(b[n], filepath.Join(root, fmt.Sprintf("%d-1", i)))
			used["req-skills-tools-blocks"] += reqDropCodexBlocks(sa)
			for _, d := range diffPaths(sa, sb, 200) {
				where := fmt.Sprintf("%s request %d: %s", name, n+1, d)
				if id := reqAllowed(d); id != "" {
					used[id]++
					continue
				}
				t.Errorf("%s", where)
			}
		}
	}
	for _, r := range reqRules {
		t.Logf("rule %s (%s): %d differences", r.id, r.what, used[r.id])
	}
}

// reqRule allows the differences whose path matches re.
type reqRule struct {
	id, what string
	re       interface{ MatchString(string) bool }
}

var reqRules = []reqRule{
	{"req-tools-gaps", "tools codexd does not implement yet: the goal tools, tool_search, the multi-agent namespace",
		regexp.MustCompile(`^\.tools\.(get_goal|create_goal|update_goal|tool_search|namespace:multi_agent_v1): only codex has it`)},
	{"req-code-mode", "code-mode models: codexd has no JavaScript exec tool, so the functions namespace holds its tools themselves",
		regexp.MustCompile(`^\.input\[0\]\.tools\.namespace:functions\.tools\.[a-z_]+: only (codex|codexd) has it`)},
	{"req-skills-tools-blocks", "no skills_instructions block (no skills yet) and no deferred-tools block (no multi-agent tools)", nil},
	{"req-turn-metadata", "turn metadata codexd cannot state: history_initialization, sandbox, auto_review_enabled, node_repl_*, workspaces, turn_trigger",
		regexp.MustCompile(`^\.(headers|client_metadata)\.x-codex-turn-metadata\.(history_initialization|sandbox|auto_review_enabled|node_repl_auto_review_required|node_repl_disabled|workspaces|turn_trigger): only codex has it`)},
	{"req-beta-features", "no x-codex-beta-features header: codexd does not do remote compaction",
		regexp.MustCompile(`^\.headers\.x-codex-beta-features: only codex has it`)},
	// A local image that cannot be read no longer reaches a request
	// (turn/start refuses it: [image-missing-refused]), so codexd's own
	// words for one, the rule's other difference, show in none.
	{"req-image-limits", "image limits of codexd's own (the 64 MiB input limit, the decoding budget, WebP scaled to PNG, the scaling filter), which the session does not reach", nil},
}

// reqDropCodexBlocks removes from Codex's shape the content parts codexd
// does not send (rule req-skills-tools-blocks) and returns how many.
func reqDropCodexBlocks(shape map[string]any) int {
	n := 0
	items, _ := shape["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		parts, ok := m["content"].([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, p := range parts {
			if p == "input_text <skills_instructions>" || p == "input_text <tools>" {
				n++
				continue
			}
			keep = append(keep, p)
		}
		m["content"] = keep
	}
	// A message that held only such parts goes too.
	kept := items[:0:0]
	for _, it := range items {
		if m, _ := it.(map[string]any); m != nil && m["type"] == "message" && len(m["content"].([]any)) == 0 {
			continue
		}
		kept = append(kept, it)
	}
	if items != nil {
		shape["input"] = kept
	}
	return n
}

func reqAllowed(d string) string {
	for _, r := range reqRules {
		if r.re != nil && r.re.MatchString(d) {
			return r.id
		}
	}
	return ""
}

// reqRunSession runs the session against a fresh mock model and returns
// the requests the server sent it.
func reqRunSession(bin, dir, model, sandbox string) ([]*mockmodel.Exchange, error) {
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{home, filepath.Join(work, ".git"), filepath.Join(work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(work, "AGENTS.md"), []byte("Keep answers short.\n"), 0o644); err != nil {
		return nil, err
	}
	// A 3×2 PNG, for the turn with a local image.
	dot, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAFklEQVR4nGL5//8/AxgwMcAAIAAA//82QgMEQlGpYwAAAABJRU5ErkJggg==")
	if err := os.WriteFile(filepath.Join(work, "dot.png"), dot, 0o644); err != nil {
		return nil, err
	}
	// A PNG whose header claims 60000×60000 pixels (14 GB decoded), for
	// the turns with an image too large.
	if err := os.WriteFile(filepath.Join(work, "huge.png"), imagetest.PNGHeader(60000, 60000), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(work, "big.png"), reqBigPNG(), 0o644); err != nil {
		return nil, err
	}
	script, err := mockmodel.ParseScript([]byte(`{"rules": [
	  {"when": {"userContains": "PATCHME", "step": 0},
	   "respond": {"output": [{"type": "custom_tool_call", "name": "apply_patch",
	     "input": "*** Begin Patch\n*** Add File: note.txt\n+hello\n*** End Patch\n"}]}},
	  {"when": {"userContains": "PATCHME"}, "respond": {"output": [{"type": "message", "text": "patched"}]}}
	]}`))
	if err != nil {
		return nil, err
	}
	mock := mockmodel.New(mockmodel.Options{Script: script})
	url, err := mock.Start("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer mock.Close()
	cfg := fmt.Sprintf(`model_provider = "mockhttp"
check_for_update_on_startup = false
[analytics]
enabled = false
[feedback]
enabled = false
[model_providers.mockhttp]
name = "mock"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, url)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "TZ=Etc/UTC")

	s, err := reqStart(bin, work, env)
	if err != nil {
		return nil, err
	}
	defer s.close()
	r, err := s.call("thread/start", map[string]any{"cwd": work, "model": model, "sandbox": sandbox, "approvalPolicy": "never"})
	if err != nil {
		return nil, err
	}
	var started struct {
		Thread struct{ ID string } `json:"thread"`
	}
	if err := json.Unmarshal(r, &started); err != nil || started.Thread.ID == "" {
		return nil, fmt.Errorf("thread/start answered %s", r)
	}
	tid := started.Thread.ID
	turn := func(s *reqServer, text string, extra map[string]any) error {
		input := []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}}
		if img, ok := extra["localImage"]; ok {
			li := map[string]any{"type": "localImage", "path": img}
			if d, ok := extra["detail"]; ok {
				li["detail"] = d
				delete(extra, "detail")
			}
			input = append(input, li)
			delete(extra, "localImage")
		}
		p := map[string]any{"threadId": tid, "input": input}
		for k, v := range extra {
			p[k] = v
		}
		if _, err := s.call("turn/start", p); err != nil {
			return err
		}
		return s.waitNote("turn/completed")
	}
	steps := []struct {
		text  string
		extra map[string]any
	}{
		{"MOCK:exec echo hi", nil},
		{"PATCHME add a note", nil},
		{"MOCK:hello look at this", map[string]any{"localImage": filepath.Join(work, "dot.png")}},
		{"MOCK:hello a huge one", map[string]any{"localImage": filepath.Join(work, "huge.png")}},
		{`MOCK:tool view_image {"path":"big.png"}`, nil},
		{"MOCK:hello at low detail", map[string]any{"localImage": filepath.Join(work, "dot.png"), "detail": "low"}},
		{`MOCK:tool view_image {"path":"missing.png"}`, nil},
		{`MOCK:tool view_image {"path":"sub"}`, nil},
		{`MOCK:tool view_image {"path":"huge.png"}`, nil},
		{"MOCK:hello after the change", map[string]any{"cwd": filepath.Join(work, "sub"), "approvalPolicy": "on-request", "sandboxPolicy": map[string]any{"type": "readOnly"}}},
	}
	if model != "codex-auto-review" {
		// A model switch (a code-mode model's switch is not compared: Codex
		// keeps its additional_tools item in the history).
		steps = append(steps, struct {
			text  string
			extra map[string]any
		}{"MOCK:hello on another model", map[string]any{"model": "gpt-5.4"}})
	}
	// Runtime workspace roots, in the cwd of the change: the roots are
	// the workspace roots of the environment context, which tells only
	// what changed (no cwd, no shell).
	steps = append(steps, struct {
		text  string
		extra map[string]any
	}{"MOCK:hello with two roots", map[string]any{"runtimeWorkspaceRoots": []any{filepath.Join(work, "sub"), work}}})
	for _, st := range steps {
		if err := turn(s, st.text, st.extra); err != nil {
			return nil, fmt.Errorf("%s: %w", st.text, err)
		}
	}
	s.close()
	s, err = reqStart(bin, work, env)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if _, err := s.call("thread/resume", map[string]any{"threadId": tid}); err != nil {
		return nil, err
	}
	if err := turn(s, "MOCK:hello after the resume", nil); err != nil {
		return nil, err
	}
	if model != "codex-auto-review" {
		// Two more resumes, each by a new server process: one to another
		// model, then one that names none (it goes on with that model),
		// and a turn: the model switch is from the last turn's model,
		// which neither resume changed.
		for _, params := range []map[string]any{{"threadId": tid, "model": "gpt-5.5"}, {"threadId": tid}} {
			s.close()
			if s, err = reqStart(bin, work, env); err != nil {
				return nil, err
			}
			defer s.close()
			if _, err := s.call("thread/resume", params); err != nil {
				return nil, err
			}
		}
		if err := turn(s, "MOCK:hello after two resumes", nil); err != nil {
			return nil, err
		}
	}
	var out []*mockmodel.Exchange
	for _, ex := range mock.Requests() {
		if ex.Path == "/v1/responses" || ex.Path == "/responses" {
			if m, err := ex.JSON(); err == nil && m["text"] != nil && hasSchema(m) {
				continue // a title or other structured job, not a turn's request
			}
			out = append(out, ex)
		}
	}
	return out, nil
}

func hasSchema(m map[string]any) bool {
	t, _ := m["text"].(map[string]any)
	return t != nil && t["format"] != nil
}

// reqServer is an app-server on stdio.
type reqServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan map[string]any
	nextID int
	once   sync.Once
}

func reqStart(bin, dir string, env []string) (*reqServer, error) {
	cmd := exec.Command(bin, "app-server")
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &reqServer{cmd: cmd, stdin: in, msgs: make(chan map[string]any, 1000)}
	go func() {
		defer close(s.msgs)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.msgs <- m
			}
		}
	}()
	// experimentalApi: turn/start's runtimeWorkspaceRoots needs it.
	if _, err := s.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "reqdiff", "version": "0.0.1"},
		"capabilities": map[string]any{"experimentalApi": true}}); err != nil {
		s.close()
		return nil, err
	}
	if err := s.send(map[string]any{"method": "initialized"}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *reqServer) send(m map[string]any) error {
	b, _ := json.Marshal(m)
	_, err := s.stdin.Write(append(b, '\n'))
	return err
}

// next returns the next message, answering the server's requests (every
// approval accepted) on the way.
func (s *reqServer) next(deadline time.Time) (map[string]any, error) {
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				return nil, fmt.Errorf("the server exited")
			}
			if _, isReq := m["method"]; isReq && m["id"] != nil {
				if err := s.send(map[string]any{"id": m["id"], "result": map[string]any{"decision": "accept"}}); err != nil {
					return nil, err
				}
				continue
			}
			return m, nil
		case <-time.After(time.Until(deadline)):
			return nil, fmt.Errorf("timed out")
		}
	}
}

func (s *reqServer) call(method string, params any) (json.RawMessage, error) {
	s.nextID++
	id := float64(s.nextID)
	if err := s.send(map[string]any{"method": method, "id": id, "params": params}); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := s.next(deadline)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if m["id"] == id && m["method"] == nil {
			if e := m["error"]; e != nil {
				return nil, fmt.Errorf("%s: %v", method, e)
			}
			b, _ := json.Marshal(m["result"])
			return b, nil
		}
	}
}

func (s *reqServer) waitNote(method string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := s.next(deadline)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", method, err)
		}
		if m["method"] == method {
			return nil
		}
	}
}

func (s *reqServer) close() {
	s.once.Do(func() {
		_ = s.stdin.Close()
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	})
}

// reqShape reduces a request to what the comparison looks at.
func reqShape(ex *mockmodel.Exchange, dir string) map[string]any {
	body, err := ex.JSON()
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	mask := func(s string) string {
		s = strings.ReplaceAll(s, dir, "<DIR>")
		s = reqDateRE.ReplaceAllString(s, "<DATE>")
		return s
	}
	out := map[string]any{}
	for k, v := range body {
		switch k {
		case "tools":
			out["tools"] = reqTools(v)
		case "input":
			out["input"] = reqInput(v, mask)
		case "prompt_cache_key":
			out[k] = "<set>"
		case "client_metadata":
			out[k] = reqMetadata(v)
		default:
			out[k] = v
		}
	}
	headers := map[string]any{}
	for name, vals := range ex.Header {
		n := strings.ToLower(name)
		switch n {
		case "host", "content-length", "accept-encoding", "user-agent", "connection":
			continue
		case "x-codex-turn-metadata":
			headers[n] = reqTurnMetadata(strings.Join(vals, ""))
		case "originator", "x-openai-internal-codex-responses-lite", "accept", "content-type":
			headers[n] = strings.Join(vals, ",")
		default:
			headers[n] = "<set>"
		}
	}
	out["headers"] = headers
	return out
}

var reqDateRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)

func reqMetadata(v any) any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, val := range m {
		if k == "x-codex-turn-metadata" {
			s, _ := val.(string)
			out[k] = reqTurnMetadata(s)
			continue
		}
		out[k] = "<set>"
	}
	return out
}

// reqTurnMetadata keeps the turn metadata's keys and its stable values.
func reqTurnMetadata(s string) any {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return "<not JSON>"
	}
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "request_kind", "sandbox_mode", "model", "reasoning_effort", "agent_name", "window_number", "analytics_enabled":
			out[k] = v
		default:
			out[k] = "<set>"
		}
	}
	return out
}

// reqTools keys the tools by kind and name, each with its schema minus
// the descriptions (and a grammar's definition).
func reqTools(v any) any {
	list, _ := v.([]any)
	out := map[string]any{}
	for _, t := range list {
		m, _ := t.(map[string]any)
		typ, _ := m["type"].(string)
		name, _ := m["name"].(string)
		key := name
		if typ == "namespace" {
			key = "namespace:" + name
		}
		if name == "" {
			key = typ
		}
		shape := map[string]any{}
		for k, val := range m {
			switch k {
			case "description":
				continue
			case "parameters":
				shape[k] = reqNoDescriptions(val)
			case "format":
				f, _ := val.(map[string]any)
				shape[k] = map[string]any{"type": f["type"], "syntax": f["syntax"]}
			case "tools":
				shape[k] = reqTools(val)
			default:
				shape[k] = val
			}
		}
		out[key] = shape
	}
	return out
}

func reqNoDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if k != "description" {
				out[k] = reqNoDescriptions(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = reqNoDescriptions(val)
		}
		return out
	}
	return v
}

var reqTagRE = regexp.MustCompile(`<([a-z_]+)[ >/]`)

// reqInput keeps each item's type, role and keys, and per message part
// its block: the tag of a context block (with the environment context's
// masked text), or the text of a user or assistant message.
func reqInput(v any, mask func(string) string) any {
	list, _ := v.([]any)
	out := make([]any, 0, len(list))
	for i, it := range list {
		m, _ := it.(map[string]any)
		shape := map[string]any{}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		shape["keys"] = strings.Join(keys, ",")
		shape["type"], shape["role"] = m["type"], m["role"]
		switch m["type"] {
		case "message":
			parts, _ := m["content"].([]any)
			var blocks []any
			for _, p := range parts {
				pm, _ := p.(map[string]any)
				if pm["type"] == "input_image" {
					blocks = append(blocks, reqImage(pm))
					continue
				}
				text, _ := pm["text"].(string)
				blocks = append(blocks, pm["type"].(string)+" "+reqBlock(text, m["role"] == "developer" && i <= 1, mask))
			}
			shape["content"] = blocks
		case "additional_tools":
			shape["tools"] = reqTools(m["tools"])
		case "function_call", "custom_tool_call":
			shape["name"] = m["name"]
		}
		out = append(out, shape)
	}
	return out
}

// reqImage is an image part's detail, and its data URL's media type and
// size (the bytes themselves are compared by the core's tests).
func reqImage(p map[string]any) string {
	url, _ := p["image_url"].(string)
	s := fmt.Sprintf("input_image detail=%v", p["detail"])
	mime, b64, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ";base64,")
	if !ok {
		return s + " " + url
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return s + " bad base64"
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return s + " " + mime + " undecodable"
	}
	return fmt.Sprintf("%s %s %dx%d", s, mime, cfg.Width, cfg.Height)
}

func reqBlock(text string, first bool, mask func(string) string) string {
	switch {
	case strings.HasPrefix(text, "<environment_context>"):
		return mask(text)
	case strings.HasPrefix(text, "# AGENTS.md instructions for "):
		head, _, _ := strings.Cut(text, "\n")
		return mask(head) + " <INSTRUCTIONS>"
	case strings.HasPrefix(text, "<"):
		if m := reqTagRE.FindStringSubmatch(text + " "); m != nil {
			return "<" + m[1] + ">"
		}
	case first:
		return "<base instructions>"
	}
	return mask(text)
}

// reqBigPNG is a whole PNG of 12000×12000 black RGBA pixels (576 MB
// decoded, past a 512 MiB decoding budget; 560 KB of file).
var reqBigPNG = sync.OnceValue(func() []byte {
	const w, h = 12000, 12000
	var b bytes.Buffer
	head := imagetest.PNGHeader(w, h)
	b.Write(head)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	row := make([]byte, 1+4*w)
	for range h {
		zw.Write(row)
	}
	zw.Close()
	chunk := func(kind string, data []byte) {
		c := append([]byte(kind), data...)
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.Write(c)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(c))
	}
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
})
