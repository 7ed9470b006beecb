package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

var appVarNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// The app-server corpus: sessions that TestAppDifferential plays against
// `codex app-server` 0.169 and codexd's. Each is one JSONL file of
// testdata/appdifferential. The first line says how the session runs:
//
//	{"session":"turn-hello","transport":"stdio"}
//	{"session":"two-clients","transport":"ws","files":{"a.txt":"hi\n"},"deliberate":["ID"]}
//	{"session":"text-limit","transport":"stdio","texts":{"AT":{"prefix":"MOCK:hello ","fill":"x","chars":1048576}}}
//	{"session":"environments","transport":"stdio","execServers":["X"]}
//	{"session":"mcp-thread","transport":"stdio","mcpServers":"[mcp_servers.tests]\ncommand = \"$MCPTEST\"\n"}
//
// transport is "stdio" (one client, A, on the server's stdin and stdout)
// or "ws" (the server listens on ws://127.0.0.1:0; clients A, B... connect
// on first use). files are written into the side's work directory (the
// server's cwd) before it starts. texts bind $NAME to a long text, prefix
// then fill repeated up to chars Unicode characters (masked as <$NAME>
// where it shows). execServers start, per side, one exec-server each
// (codexd's, in the test process, on a loopback WebSocket, confined to a
// root of its own) and bind $NAME to its URL and $NAME_ROOT to its root.
// mcpServers is TOML appended to both sides' config.toml, $MCPTEST in it
// the path of the Go MCP test server (mcp/internal/testserver).
// deliberate names listed deliberate
// differences whose effects carry over to later steps of this session.
//
// Every other line is a step, on client "c" (default A):
//
//	{"init":true}                        initialize (clientInfo codexd-appdiff), then initialized
//	{"init":{"experimentalApi":true}}    the same with these capabilities
//	{"send":{"id":2,"method":"thread/start","params":{}},"bind":{"T":"result.thread.id"}}
//	                                     a request: sent, its answer awaited; bind names values of it
//	                                     (a name ending in "?" binds only where the value is there:
//	                                     a value one side's answer has and the other's has not)
//	{"send":"not json"}                  a line or frame sent as is (then a probe is awaited)
//	{"send":{"method":"initialized"}}    a notification (then a probe is awaited)
//	{"nowait":{"id":3,...}}              a request whose answer a later await takes
//	{"await":3,"bind":{...}}             wait for the answer with id 3
//	{"wait":"turn/completed","thread":"$T","bind":{"U":"params.turn.id"}}
//	                                     wait for the next notification of that method (of that thread)
//	{"request":"item/commandExecution/requestApproval"}
//	                                     wait for the next server request of that method
//	{"reply":{"result":{"decision":"accept"}}}
//	                                     answer the server request the client took last
//	{"close":true}                       the client closes its connection
//
// In what is sent, $NAME is a value bound before on the same side, $W the
// side's work directory, $H its CODEX_HOME and $TMPDIR its TMPDIR. A probe is
// thread/loaded/list with id "sync-N".
//
// Rules a session keeps, so that both runs are deterministic: a turn's
// events are awaited up to turn/completed before the next step that
// depends on them; nothing sleeps; approvals are taken with "request"
// before they are answered.

type appSession struct {
	name       string
	file       string
	transport  string
	files      []appFile
	deliberate []string
	texts      map[string]string
	execs      []string
	mcp        string // TOML of [mcp_servers] tables, $MCPTEST expanded
	steps      []appStep
}

// appText is a long text of a session's header.
type appText struct {
	Prefix string `json:"prefix"`
	Fill   string `json:"fill"`
	Chars  int    `json:"chars"`
}

type appFile struct{ path, content string }

type appStep struct {
	line   int
	conn   string
	op     string // init send nowait await wait request reply close
	arg    string // the message (JSON text), the method, the id or the capabilities
	thread string // wait: the threadId to match
	bind   map[string]string
}

func loadAppCorpus(dir string) ([]*appSession, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.jsonl sessions in %s", dir)
	}
	sort.Strings(files)
	var all []*appSession
	seen := map[string]string{}
	for _, f := range files {
		s, err := parseAppSession(f)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[s.name]; dup {
			return nil, fmt.Errorf("%s: session %q already defined in %s", f, s.name, prev)
		}
		seen[s.name] = f
		all = append(all, s)
	}
	return all, nil
}

func parseAppSession(path string) (*appSession, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &appSession{file: filepath.Base(path)}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		where := fmt.Sprintf("%s:%d", s.file, n)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		if s.name == "" {
			var h struct {
				Session    string             `json:"session"`
				Transport  string             `json:"transport"`
				Files      map[string]string  `json:"files"`
				Deliberate []string           `json:"deliberate"`
				Texts      map[string]appText `json:"texts"`
				Execs      []string           `json:"execServers"`
				MCP        string             `json:"mcpServers"`
			}
			if err := json.Unmarshal(line, &h); err != nil || h.Session == "" {
				return nil, fmt.Errorf("%s: the first line must be the session's header {\"session\":NAME,\"transport\":...}", where)
			}
			if h.Transport != "stdio" && h.Transport != "ws" {
				return nil, fmt.Errorf("%s: transport must be stdio or ws, not %q", where, h.Transport)
			}
			s.name, s.transport, s.deliberate = h.Session, h.Transport, h.Deliberate
			for _, name := range h.Execs {
				if !appVarNameRE.MatchString(name) {
					return nil, fmt.Errorf("%s: exec-server %q: want an upper-case name", where, name)
				}
			}
			s.execs = h.Execs
			s.mcp = h.MCP
			for name, t := range h.Texts {
				n := t.Chars - utf8.RuneCountInString(t.Prefix)
				if !appVarNameRE.MatchString(name) || t.Fill == "" || utf8.RuneCountInString(t.Fill) != 1 || n < 0 || t.Chars > 4<<20 {
					return nil, fmt.Errorf("%s: text %q: want an upper-case name, one fill character and 0 <= chars-len(prefix), chars <= 4Mi", where, name)
				}
				if s.texts == nil {
					s.texts = map[string]string{}
				}
				s.texts[name] = t.Prefix + strings.Repeat(t.Fill, n)
			}
			for p, c := range h.Files {
				if filepath.IsAbs(p) || strings.Contains(p, "..") {
					return nil, fmt.Errorf("%s: file %q must be relative, inside the work directory", where, p)
				}
				s.files = append(s.files, appFile{p, c})
			}
			sort.Slice(s.files, func(i, j int) bool { return s.files[i].path < s.files[j].path })
			continue
		}
		st := appStep{line: n, conn: "A"}
		ops := 0
		for k, v := range m {
			switch k {
			case "c":
				if err := json.Unmarshal(v, &st.conn); err != nil {
					return nil, fmt.Errorf("%s: c: %v", where, err)
				}
			case "bind":
				if err := json.Unmarshal(v, &st.bind); err != nil {
					return nil, fmt.Errorf("%s: bind: %v", where, err)
				}
			case "thread":
				if err := json.Unmarshal(v, &st.thread); err != nil {
					return nil, fmt.Errorf("%s: thread: %v", where, err)
				}
			case "init", "send", "nowait", "await", "wait", "request", "reply", "close":
				ops++
				st.op = k
				switch k {
				case "init":
					if string(v) != "true" {
						st.arg = string(v)
					}
				case "send", "nowait":
					var text string
					if json.Unmarshal(v, &text) == nil {
						st.arg = text
					} else {
						st.arg = string(v)
					}
				case "wait", "request":
					if err := json.Unmarshal(v, &st.arg); err != nil {
						return nil, fmt.Errorf("%s: %s takes a method name", where, k)
					}
				case "reply":
					if len(v) == 0 || v[0] != '{' {
						return nil, fmt.Errorf("%s: reply takes an object {\"result\":...} or {\"error\":...}", where)
					}
					st.arg = string(v)
				default:
					st.arg = string(v)
				}
			default:
				return nil, fmt.Errorf("%s: unknown member %q", where, k)
			}
		}
		if ops != 1 {
			return nil, fmt.Errorf("%s: a step has exactly one of init, send, nowait, await, wait, request, reply, close", where)
		}
		if s.transport == "stdio" && st.conn != "A" {
			return nil, fmt.Errorf("%s: a stdio session has only client A", where)
		}
		s.steps = append(s.steps, st)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if s.name == "" {
		return nil, fmt.Errorf("%s: empty session", s.file)
	}
	return s, nil
}
