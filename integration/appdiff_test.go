//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAppDifferential plays every session of the app-server corpus
// (testdata/appdifferential, format in appdiffcorpus_test.go) against
// `codex app-server` 0.169 and `codexd app-server`, each with a fresh
// CODEX_HOME holding the same config.toml, a mock model of its own
// (mockmodel: the same answers to the same requests) and a work directory
// of its own, and compares what a client can observe: each step's answers
// (result or error, code and message) and server requests with their
// params, and the notifications of each thread on each connection, in
// order. Times, bound ids and the side's directories are masked; nothing
// else. A difference fails the test unless a rule of appdiffrules_test.go
// accounts for it; each rule's id is in the README's list of how the
// app-server differs from Codex.
//
// Everything runs in a network namespace with only loopback.
// CODEXD_APPDIFF_ONLY=substring runs only the sessions whose name contains
// it; CODEXD_APPDIFF_DUMP=substring logs all both sides showed in them;
// CODEXD_APPDIFF_REPORT=file writes the full report there.
func TestAppDifferential(t *testing.T) {
	codex := codexBin(t)
	if !inNetns() {
		t.Setenv("CODEXD_APPDIFF_BIN", buildCodexd(t))
		t.Setenv("CODEXD_APPDIFF_MCPTEST", buildMCPTestServer(t))
		runInNetns(t, "TestAppDifferential", 4*time.Minute)
		return
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
	corpus, err := loadAppCorpus(filepath.Join("testdata", "appdifferential"))
	if err != nil {
		t.Fatal(err)
	}
	corpus = onlyNamed(corpus, "CODEXD_APPDIFF_ONLY", func(s *appSession) string { return s.name })
	sides := [2]appSide{{"codex", codex}, {"codexd", os.Getenv("CODEXD_APPDIFF_BIN")}}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	type result struct {
		obs   [2]*appObservation
		diffs []appDiff
	}
	results := make([]result, len(corpus))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < max(2, runtime.NumCPU()); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				var both sync.WaitGroup
				for k := range sides {
					base := filepath.Join(root, fmt.Sprintf("%03d", i), sides[k].name)
					d := appDirs{home: filepath.Join(base, "home"), work: filepath.Join(base, "work"), tmp: filepath.Join(base, "tmp")}
					for _, p := range []string{d.home, d.work, d.tmp} {
						if err := os.MkdirAll(p, 0o755); err != nil {
							results[i].obs[k] = &appObservation{fatal: err}
						}
					}
					if results[i].obs[k] != nil {
						continue
					}
					both.Add(1)
					go func() {
						defer both.Done()
						results[i].obs[k] = runAppSession(sides[k], corpus[i], d)
					}()
				}
				both.Wait()
				if results[i].obs[0].fatal == nil && results[i].obs[1].fatal == nil {
					results[i].diffs = appCompare(corpus[i], results[i].obs[0], results[i].obs[1])
				}
			}
		}()
	}
	for i := range corpus {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)

	var report strings.Builder
	defects, explained := 0, map[string]int{}
	for i, r := range results {
		s := corpus[i]
		if dump := os.Getenv("CODEXD_APPDIFF_DUMP"); dump != "" && strings.Contains(s.name, dump) {
			for k, o := range r.obs {
				t.Logf("%s on %s:\n%s", s.name, sides[k].name, dumpAppObservation(o))
			}
		}
		for k, o := range r.obs {
			if o.fatal != nil {
				t.Errorf("%s (%s) on %s: %v\nserver log:\n%s", s.name, s.file, sides[k].name, o.fatal, clip(o.log, 3000))
			}
		}
		for _, d := range r.diffs {
			v := "DEFECT"
			if d.defect {
				defects++
			} else {
				v = "deliberate [" + strings.Join(d.rules, "] [") + "]"
				for _, id := range d.rules {
					explained[id]++
				}
			}
			fmt.Fprintf(&report, "--- %s (%s) %s: %s\n", s.name, s.file, v, clip(d.item.where, 400))
			left := d.left
			if !d.defect {
				left = d.item
			}
			for _, l := range diffPaths(left.codex, left.codexd, 12) {
				fmt.Fprintf(&report, "    %s\n", l)
			}
		}
	}
	if p := os.Getenv("CODEXD_APPDIFF_REPORT"); p != "" {
		_ = os.WriteFile(p, []byte(report.String()), 0o644)
	}
	t.Logf("%d sessions in %s; %d differences not accounted for; deliberate ones: %v", len(corpus), elapsed.Round(time.Millisecond), defects, explained)
	if defects > 0 {
		t.Errorf("codexd's app-server differs from Codex 0.169 where it should not:\n%s", onlyDefects(report.String()))
	}
}

// appDiff is one item that differs, and what the rules made of it.
type appDiff struct {
	item   appItem
	rules  []string // the rules that changed something
	left   appItem  // the item after the rules
	defect bool     // still differs after every rule
}

// appCompare lists the items of a session that differ, each explained by
// the rules or not.
func appCompare(s *appSession, codex, codexd *appObservation) []appDiff {
	var out []appDiff
	for _, it := range appItems(codex, codexd) {
		if reflect.DeepEqual(it.codex, it.codexd) {
			continue
		}
		d := appDiff{item: it, left: appItem{where: it.where, line: it.line, method: it.method, codex: deepCopy(it.codex), codexd: deepCopy(it.codexd)}}
		for _, r := range appRules {
			if r.declared || r.fix == nil {
				continue
			}
			before := canon(d.left.codex) + "\x00" + canon(d.left.codexd)
			r.fix(s, &d.left)
			if canon(d.left.codex)+"\x00"+canon(d.left.codexd) != before {
				d.rules = append(d.rules, r.id)
			}
			if reflect.DeepEqual(d.left.codex, d.left.codexd) {
				break
			}
		}
		if !reflect.DeepEqual(d.left.codex, d.left.codexd) {
			for _, r := range appRules {
				if r.declared && contains(s.deliberate, r.id) {
					d.rules = append(d.rules, r.id)
					d.left.codex, d.left.codexd = nil, nil
					break
				}
			}
		}
		d.defect = !reflect.DeepEqual(d.left.codex, d.left.codexd)
		out = append(out, d)
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// deepCopy copies a decoded JSON value, so that rules can edit it.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

func dumpAppObservation(o *appObservation) string {
	var b strings.Builder
	if o == nil {
		return "(none)\n"
	}
	for _, st := range o.steps {
		fmt.Fprintf(&b, "  line %d on %s: %s\n    -> %s\n", st.line, st.conn, clip(st.desc, 300), clip(canon(st.msgs), 3000))
	}
	for _, c := range o.conns {
		for _, n := range o.notes[c] {
			fmt.Fprintf(&b, "  %s <- %s\n", c, clip(canon(n), 1500))
		}
	}
	if o.fatal != nil {
		fmt.Fprintf(&b, "  fatal: %v\n", o.fatal)
	}
	return b.String()
}

// appServedMethods are the client requests codexd's app-server serves
// (appserver's handlers); the corpus calls each.
var appServedMethods = []string{
	"initialize", "thread/start", "thread/resume", "thread/fork", "thread/read", "thread/list",
	"thread/loaded/list", "thread/turns/list", "thread/unsubscribe", "thread/archive",
	"thread/unarchive", "thread/name/set", "thread/settings/update", "turn/start", "turn/steer",
	"turn/interrupt", "model/list", "account/read", "config/read", "configRequirements/read",
	"skills/list", "permissionProfile/list", "collaborationMode/list", "command/exec",
	"command/exec/write", "command/exec/terminate", "command/exec/resize", "fs/readFile",
	"fs/writeFile", "fs/createDirectory", "fs/getMetadata", "fs/readDirectory", "fs/remove", "fs/copy",
}

// TestAppDifferentialCorpus checks the app-server corpus without any
// server: it parses, it calls every method codexd serves, it has the
// sessions the issue asks for, and the README's list of how the app-server
// differs names exactly the rules the test knows.
func TestAppDifferentialCorpus(t *testing.T) {
	corpus, err := loadAppCorpus(filepath.Join("testdata", "appdifferential"))
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]bool{}
	var all strings.Builder
	ws2 := false
	for _, s := range corpus {
		conns := map[string]bool{}
		for _, st := range s.steps {
			conns[st.conn] = true
			all.WriteString(st.op + " " + st.arg + "\n")
			if st.op == "init" {
				methods["initialize"] = true
			}
			if st.op != "send" && st.op != "nowait" {
				continue
			}
			var m struct {
				Method string `json:"method"`
			}
			if json.Unmarshal([]byte(st.arg), &m) == nil {
				methods[m.Method] = true
			}
		}
		if s.transport == "ws" && len(conns) >= 2 {
			ws2 = true
		}
		for _, id := range s.deliberate {
			ok := false
			for _, r := range appRules {
				ok = ok || (r.id == id && r.declared)
			}
			if !ok {
				t.Errorf("%s declares [%s], which is not a declared rule of the test", s.file, id)
			}
		}
	}
	for _, m := range appServedMethods {
		if !methods[m] {
			t.Errorf("no session calls %s", m)
		}
	}
	if !ws2 {
		t.Error("no WebSocket session has two clients")
	}
	for _, v := range []struct{ what, re string }{
		{"a command approval accepted", `request item/commandExecution/requestApproval(?s:.)*?reply \{"result":\{"decision":"accept"\}\}`},
		{"a command approval declined", `"decision":"decline"`},
		{"a command approval cancelled", `"decision":"cancel"`},
		{"an approval for the session", `"decision":"acceptForSession"`},
		{"an error answer to a server request", `reply \{"error":`},
		{"a steer", `"method":"turn/steer"`},
		{"an interrupt", `"method":"turn/interrupt"`},
		{"a resume", `"method":"thread/resume"`},
		{"a fork", `"method":"thread/fork"`},
		{"an archive", `"method":"thread/archive"`},
		{"a thread/list cursor", `"cursor":"\$`},
		{"command/exec with a sandbox policy", `"method":"command/exec","params":\{[^\n]*"sandboxPolicy"`},
		{"a line that is not JSON", `(?m)^send [^{\n]`},
	} {
		if !regexp.MustCompile(v.re).MatchString(all.String()) {
			t.Errorf("the corpus has no %s (%s)", v.what, v.re)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, id := range readmeSectionIDs(string(readme), "### How the app-server differs from Codex 0.169", "\n#") {
		listed[id] = true
	}
	known := map[string]bool{}
	for _, r := range appRules {
		known[r.id] = true
		if !listed[r.id] {
			t.Errorf("rule [%s] is not in the README's list of how the app-server differs from Codex 0.169", r.id)
		}
	}
	for id := range listed {
		if !known[id] {
			t.Errorf("the README's list of how the app-server differs names [%s], a rule TestAppDifferential does not know", id)
		}
	}
}
