//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexd/codexd/execserver"
)

// TestDifferential runs every sequence of the corpus
// (testdata/differential, format in diffcorpus_test.go) against the real
// Codex 0.169 exec-server and codexd's, each on a fresh connection and in
// a scratch directory of its own, and compares what a client can observe:
// answers (result or error, code, message, masked values), whether the
// server closed the connection, each process's notifications, and the
// answers nobody waited for. A difference fails the test unless it is one
// of the deliberate differences (diffrules_test.go), which the README
// lists. Codex runs in a network namespace with only loopback, and no
// message that writes or removes is sent unless its paths lie in the
// scratch directory (diffsafety_test.go).
//
// CODEXD_DIFF_ONLY=substring runs only the sequences whose name contains
// it; CODEXD_DIFF_REPORT=file writes the full report there;
// CODEXD_DIFF_DUMP=substring logs everything both sides showed in the
// sequences whose name contains it.
func TestDifferential(t *testing.T) {
	bin := codexBin(t)
	if !inNetns() {
		runInNetns(t, "TestDifferential", 5*time.Minute)
		return
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo in the test's network namespace: %v", err)
	}
	corpus, err := loadCorpus(filepath.Join("testdata", "differential"))
	if err != nil {
		t.Fatal(err)
	}
	corpus = onlyNamed(corpus, "CODEXD_DIFF_ONLY", func(s *sequence) string { return s.name })
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"codex", "codexd", "home"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	codexURL := startCodexExecServer(t, bin, filepath.Join(root, "home"), filepath.Join(root, "codex"))
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	codexdHTTP := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		codexdHTTP.Close()
	})
	codexdURL := "ws://" + codexdHTTP.Listener.Addr().String()
	web := httptest.NewServer(fixtureHTTP())
	t.Cleanup(web.Close)

	start := time.Now()
	type result struct {
		diffs      []difference
		violations []string
		fatal      []string
		goTypes    []string
	}
	results := make([]result, len(corpus))
	work := make(chan int)
	var wg sync.WaitGroup
	workers := max(2, runtime.NumCPU()*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				seq := corpus[i]
				dirs := [2]string{
					filepath.Join(root, "codex", fmt.Sprintf("%03d", i)),
					filepath.Join(root, "codexd", fmt.Sprintf("%03d", i)),
				}
				sides := [2]side{{"codex", codexURL}, {"codexd", codexdURL}}
				var obs [2]*observation
				var both sync.WaitGroup
				for k := range sides {
					if err := os.Mkdir(dirs[k], 0o755); err != nil {
						obs[k] = &observation{fatal: err}
						continue
					}
					both.Add(1)
					go func() {
						defer both.Done()
						o := runSequence(sides[k], seq, dirs[k], web.URL)
						maskObservation(o, &masker{scratch: dirs[k], httpURL: web.URL, sids: map[string]string{}, exact: seq.exact})
						obs[k] = o
					}()
				}
				both.Wait()
				if dump := os.Getenv("CODEXD_DIFF_DUMP"); dump != "" && strings.Contains(seq.name, dump) {
					for k, o := range obs {
						t.Logf("%s on %s:\n%s", seq.name, sides[k].name, dumpObservation(o))
					}
				}
				var r result
				for k, o := range obs {
					if o.fatal != nil {
						r.fatal = append(r.fatal, fmt.Sprintf("%s (%s:%d) on %s: %v", seq.name, seq.file, seq.line, sides[k].name, o.fatal))
					}
				}
				if r.fatal == nil {
					r.diffs = compare(seq, obs[0], obs[1])
					for _, v := range obs[1].violations {
						r.violations = append(r.violations, seq.name+": "+v)
					}
					for _, v := range obs[0].violations {
						t.Logf("Codex broke an invariant in %s: %s", seq.name, v)
					}
					for _, m := range errorMessages(obs[1]) {
						if p := goTypeProblem(m); p != "" {
							r.goTypes = append(r.goTypes, seq.name+": "+p)
						}
					}
				}
				results[i] = r
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
		for _, f := range r.fatal {
			t.Errorf("runner: %s", f)
		}
		for _, v := range r.violations {
			t.Errorf("codexd broke an invariant: %s", v)
		}
		for _, g := range r.goTypes {
			t.Errorf("%s", g)
		}
		for _, d := range r.diffs {
			fmt.Fprintf(&report, "--- %s (%s:%d) %s\n    sent:   %s\n    codex:  %s\n    codexd: %s\n",
				corpus[i].name, corpus[i].file, d.line, verdict(d), clip(d.where, 400), clip(canon(d.codex), 1200), clip(canon(d.codexd), 1200))
			switch {
			case d.deliberate == "" || d.extra != "":
				defects++
			default:
				explained[d.deliberate]++
			}
		}
	}
	if p := os.Getenv("CODEXD_DIFF_REPORT"); p != "" {
		_ = os.WriteFile(p, []byte(report.String()), 0o644)
	}
	t.Logf("%d sequences in %s; %d differences not accounted for; deliberate ones: %v",
		len(corpus), elapsed.Round(time.Millisecond), defects, explained)
	if defects > 0 {
		t.Errorf("codexd differs from Codex 0.169 where it should not:\n%s", onlyDefects(report.String()))
	} else if report.Len() > 0 {
		t.Logf("deliberate differences seen:\n%s", clip(report.String(), 20000))
	}
}

func verdict(d difference) string {
	switch {
	case d.deliberate != "" && d.extra != "":
		return fmt.Sprintf("DEFECT (deliberate [%s], but %s)", d.deliberate, d.extra)
	case d.deliberate != "":
		return fmt.Sprintf("deliberate [%s]", d.deliberate)
	}
	return "DEFECT"
}

func onlyDefects(report string) string {
	var out strings.Builder
	for _, block := range strings.SplitAfter(report, "--- ") {
		if strings.Contains(block, "DEFECT") {
			out.WriteString("--- " + strings.TrimSuffix(block, "--- "))
		}
	}
	return clip(out.String(), 60000)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

// errorMessages lists every error message codexd sent in a run.
func errorMessages(o *observation) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if e, ok := v["error"].(map[string]any); ok {
				if m, ok := e["message"].(string); ok {
					out = append(out, m)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, s := range o.steps {
		walk(s.answers)
	}
	for _, v := range o.notes {
		walk(v)
	}
	return out
}

// startCodexExecServer runs `codex exec-server` with a throwaway
// CODEX_HOME until the test ends and returns its ws:// URL.
func startCodexExecServer(t *testing.T, bin, home, cwd string) string {
	t.Helper()
	cmd := exec.Command(bin, "exec-server", "--listen", "ws://127.0.0.1:0")
	cmd.Dir = cwd
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CODEX_HOME=" + home,
		"RUST_LOG=error",
		"NO_COLOR=1",
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s exec-server: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if s := strings.TrimSpace(stderr.String()); s != "" && !strings.Contains(s, "WARNING: proceeding") {
			t.Logf("codex exec-server stderr:\n%s", clip(s, 4000))
		}
	})
	urlc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		urlc <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case u := <-urlc:
		if !strings.HasPrefix(u, "ws://") {
			t.Fatalf("codex exec-server printed %q, not its ws:// URL", u)
		}
		return u
	case <-time.After(60 * time.Second):
		t.Fatalf("codex exec-server printed no URL within 60s")
	}
	return ""
}

// fixtureHTTP is the local web server that http/request sequences talk to.
func fixtureHTTP() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Fixture", "one")
		w.Header().Add("X-Fixture", "two")
		fmt.Fprint(w, "hello from the fixture\n")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var names []string
		for k := range r.Header {
			if strings.HasPrefix(k, "X-") {
				names = append(names, k+"="+strings.Join(r.Header[k], ","))
			}
		}
		sort.Strings(names)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s host=%s headers=%s body=%q\n", r.Method, r.URL.RequestURI(), r.Host, strings.Join(names, ";"), body)
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/status/"), "%d", &code)
		if code < 100 || code > 599 {
			code = 400
		}
		w.WriteHeader(code)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/text", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		for i := 0; i < 8; i++ {
			_, _ = w.Write(chunk)
		}
	})
	mux.HandleFunc("/slowbody", func(w http.ResponseWriter, r *http.Request) {
		// The headers at once, the body a moment later.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(300 * time.Millisecond):
		}
		fmt.Fprint(w, "late body\n")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		// Answers when the client gives up (its timeout), or after 10 s.
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	return mux
}

// TestDifferentialCorpus checks the corpus without any server: it parses,
// it is large enough, it covers every method and the required kinds of
// params, every destructive message stays in its scratch directory, and
// the README lists exactly the deliberate differences the test knows.
func TestDifferentialCorpus(t *testing.T) {
	corpus, err := loadCorpus(filepath.Join("testdata", "differential"))
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 150 {
		t.Errorf("the corpus has %d sequences; it needs at least 150", len(corpus))
	}
	scratch, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]int{}
	kinds := map[string]map[string]bool{} // method -> kinds of params sent
	var all strings.Builder
	for i, seq := range corpus {
		dir := filepath.Join(scratch, fmt.Sprintf("%03d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := makeFixtures(dir, seq.fixtures); err != nil {
			t.Fatalf("%s: fixtures: %v", seq.name, err)
		}
		vars := map[string]string{"S": dir, "HTTP": "http://127.0.0.1:1",
			"SID": "00000000-0000-4000-8000-000000000000", "SID_B": "00000000-0000-4000-8000-000000000001"}
		for _, st := range seq.steps {
			if st.msg == "" {
				continue
			}
			msg := []byte(expand(st.msg, vars))
			if err := checkSafe(msg, dir); err != nil {
				t.Errorf("%s:%d (%s): %v", seq.file, st.line, seq.name, err)
			}
			all.Write(msg)
			all.WriteByte('\n')
			if info := classify(msg); info.method != "" {
				methods[info.method]++
				if kinds[info.method] == nil {
					kinds[info.method] = map[string]bool{}
				}
				kinds[info.method][paramsKind(info.params)] = true
			}
		}
	}
	for _, m := range allMethods {
		if methods[m] == 0 {
			t.Errorf("no sequence calls %s", m)
		}
	}
	// Every method gets params of every kind.
	for _, m := range allMethods {
		switch m {
		case "initialized", "environmentConfig/read", "capabilities/discoverV2", "capabilityRoots/discoverV1":
			continue
		}
		for _, k := range []string{"absent", "null", "{}", "object", "array", "string", "number", "boolean"} {
			if !kinds[m][k] {
				t.Errorf("no sequence sends %s with params that are %s", m, k)
			}
		}
	}
	// And the variants the issue names, somewhere.
	for _, v := range []struct{ what, re string }{
		{"a negative number", `":-[1-9]`},
		{"bad base64", `"(chunk|dataBase64|bodyBase64)":"[^"]*[!=-][^"]*"`},
		{"a relative file: URI", `"file:[^/"]`},
		{"a bare path for a URI", `"(path|cwd)":"/`},
		{"a URI of another scheme", `"(path|cwd)":"https?://`},
		{"zero limits", `"maxDirectories":0`},
		{"a zero length", `"len":0`},
		{"huge numbers", `18446744073709551615`},
		{"a number past 2^64", `18446744073709551616`},
		{"a handle used in the other mode", `"mode":"replace"`},
		{"resume", `"resumeSessionId":"[0-9a-f-]{36}"`},
		{"a tty process", `"tty":true`},
	} {
		if !regexp.MustCompile(v.re).MatchString(all.String()) {
			t.Errorf("the corpus has no %s (%s)", v.what, v.re)
		}
	}
	// A request id sent again while the first is still in flight.
	inFlightDup := false
	for _, seq := range corpus {
		pending := map[string]bool{}
		for _, st := range seq.steps {
			info := classify([]byte(substituteForCheck(st.msg)))
			switch st.op {
			case "nowait", "send":
				if info.isRequest && pending[info.id] {
					inFlightDup = true
				}
				if st.op == "nowait" {
					pending[info.id] = true
				}
			case "await":
				delete(pending, canonicalID([]byte(st.args[0])))
			}
		}
	}
	if !inFlightDup {
		t.Error("the corpus never sends a request id that is still in flight")
	}
	declared := map[string]bool{}
	for _, d := range deliberateDifferences {
		declared[d.id] = d.declared
	}
	for _, seq := range corpus {
		for _, id := range seq.deliberate {
			if !declared[id] {
				t.Errorf("%s:%d (%s) declares [%s], which is not a deliberate difference a sequence may declare", seq.file, seq.line, seq.name, id)
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, id := range readmeDeliberateIDs(string(readme)) {
		listed[id] = true
	}
	known := map[string]bool{}
	for _, d := range deliberateDifferences {
		known[d.id] = true
		if !listed[d.id] {
			t.Errorf("deliberate difference [%s] is not in the README's list of deliberate differences", d.id)
		}
	}
	for id := range listed {
		if !known[id] {
			t.Errorf("the README lists a deliberate difference [%s] that the differential test does not know", id)
		}
	}
}

// paramsKind names the JSON kind of raw params.
func paramsKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) == 0:
		return "absent"
	case string(t) == "null":
		return "null"
	case t[0] == '{':
		if string(bytes.Join(bytes.Fields(t), nil)) == "{}" {
			return "{}"
		}
		return "object"
	case t[0] == '[':
		return "array"
	case t[0] == '"':
		return "string"
	case t[0] == 't' || t[0] == 'f':
		return "boolean"
	}
	return "number"
}

// allMethods are the requests of Codex 0.169's exec-server.
var allMethods = []string{
	"initialize", "initialized", "environment/info", "environment/status",
	"process/start", "process/read", "process/write", "process/signal", "process/terminate",
	"fs/readFile", "fs/writeFile", "fs/createDirectory", "fs/getMetadata", "fs/readDirectory",
	"fs/remove", "fs/copy", "fs/canonicalize", "fs/open", "fs/readBlock", "fs/writeBlock",
	"fs/close", "fs/walk", "fs/watchMissing", "http/request",
	"environmentConfig/read", "capabilities/discoverV2", "capabilityRoots/discoverV1",
}

// dumpObservation writes out all an observation holds, for debugging.
func dumpObservation(o *observation) string {
	var b strings.Builder
	for _, st := range o.steps {
		fmt.Fprintf(&b, "  line %d on %s: %s\n    -> %s closed=%v\n", st.line, st.conn, clip(st.desc, 300), clip(canon(st.answers), 2000), st.closed)
	}
	keys := make([]string, 0, len(o.notes))
	for k := range o.notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %s\n", k, clip(canon(o.notes[k]), 2000))
	}
	for _, v := range o.violations {
		fmt.Fprintf(&b, "  violation: %s\n", v)
	}
	return b.String()
}

// onlyNamed keeps the corpus entries whose name contains the value of the
// environment variable env, or all of them when it is unset: how a
// developer runs one case of a differential test.
func onlyNamed[T any](corpus []T, env string, name func(T) string) []T {
	only := os.Getenv(env)
	if only == "" {
		return corpus
	}
	var keep []T
	for _, c := range corpus {
		if strings.Contains(name(c), only) {
			keep = append(keep, c)
		}
	}
	return keep
}
