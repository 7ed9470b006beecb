package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The differential corpus: request sequences that TestDifferential runs
// against Codex's exec-server and codexd's. It lives in
// testdata/differential/*.seq, one or more sequences per file:
//
//	# a comment
//	=== fs-readFile-missing           starts a sequence (names are unique)
//	file a.txt "hello\n"              fixture: a file in the scratch directory
//	dir sub                           fixture: a directory
//	link l a.txt                      fixture: a symbolic link to a target
//	init                              initialize, then initialized
//	send {"id":1,"method":"fs/readFile","params":{"path":"file://$S/a.txt"}}
//	nowait {...}                      send a request without waiting for its answer
//	await 1                           wait for the next answer with this id (JSON)
//	raw "text"                        send this text frame as is (a JSON string)
//	binary "text"                     the same in a binary frame
//	sync                              wait until everything sent so far is handled
//	wait-output p1 "text"             wait until process p1 has printed text
//	wait-exited p1                    wait for process/exited of p1
//	wait-closed p1                    wait for process/closed of p1
//	wait-body r1                      wait for the final http/request/bodyDelta of r1
//	wait-missing 7                    wait for fs/missingChanged of watch 7 (both servers
//	                                  notify after the write that satisfies the watch
//	                                  has been answered, so without this the end of a
//	                                  sequence can come first)
//	conn B                            talk on connection B from now on (opened on first use)
//	close                             the client closes the current connection
//	resume {...}                      an initialize that resumes a session: sent again
//	                                  while the server still sees the session attached
//	                                  (-32010), as a client does once its old
//	                                  connection is gone
//	exact                             compare process/read results chunk by chunk,
//	                                  seq numbers included (only where the output's
//	                                  chunking does not depend on timing)
//	deliberate ID                     differences in this sequence are the listed
//	                                  deliberate difference ID (for those whose
//	                                  effects carry over to later steps)
//
// After a send of anything but a request with a valid id (a notification,
// a response, a frame that does not parse), the runner syncs: it sends
// {"id":"sync-N","method":"environment/status"} and waits for its answer,
// so that every answer to what was sent has arrived (both servers handle a
// connection's messages in order) or the connection is seen closed.
//
// In messages, $S is the sequence's scratch directory (absolute, no
// trailing slash), $HTTP the base URL of a local HTTP server, $SID the
// session id connection A got, $SID_B that of connection B.

type step struct {
	line int
	op   string // file dir link init send nowait await raw binary sync wait-output wait-exited wait-closed wait-missing conn close resume
	args []string
	msg  string // send, nowait, raw, binary, resume: the text to send
}

type sequence struct {
	name  string
	file  string
	line  int
	steps []step
	// fixtures, in order
	fixtures []step
	// exact: compare read results chunk by chunk
	exact bool
	// deliberate lists the deliberate differences this sequence shows.
	deliberate []string
}

func loadCorpus(dir string) ([]*sequence, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.seq"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.seq files in %s", dir)
	}
	sort.Strings(files)
	var all []*sequence
	seen := map[string]string{}
	for _, f := range files {
		seqs, err := parseCorpusFile(f)
		if err != nil {
			return nil, err
		}
		for _, s := range seqs {
			if prev, dup := seen[s.name]; dup {
				return nil, fmt.Errorf("%s:%d: sequence %q already defined in %s", s.file, s.line, s.name, prev)
			}
			seen[s.name] = fmt.Sprintf("%s:%d", s.file, s.line)
			all = append(all, s)
		}
	}
	return all, nil
}

func parseCorpusFile(path string) ([]*sequence, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	var seqs []*sequence
	var cur *sequence
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		errf := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s", base, n, fmt.Sprintf(format, a...))
		}
		if name, ok := strings.CutPrefix(line, "=== "); ok {
			cur = &sequence{name: strings.TrimSpace(name), file: base, line: n}
			seqs = append(seqs, cur)
			continue
		}
		if cur == nil {
			return nil, errf("a step before the first === line")
		}
		op, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		st := step{line: n, op: op}
		switch op {
		case "exact":
			cur.exact = true
			continue
		case "deliberate":
			if rest == "" {
				return nil, errf("deliberate wants an id")
			}
			cur.deliberate = append(cur.deliberate, rest)
			continue
		case "init", "sync", "close":
			if rest != "" {
				return nil, errf("%s takes no argument", op)
			}
		case "send", "nowait", "resume":
			if !json.Valid([]byte(substituteForCheck(rest))) {
				return nil, errf("%s: not valid JSON (use raw for that): %s", op, rest)
			}
			st.msg = rest
		case "raw", "binary":
			s, err := strconv.Unquote(rest)
			if err != nil {
				var js string
				if json.Unmarshal([]byte(rest), &js) != nil {
					return nil, errf("%s wants a quoted string: %v", op, err)
				}
				s = js
			}
			st.msg = s
		case "await":
			if !json.Valid([]byte(rest)) {
				return nil, errf("await wants a JSON id")
			}
			st.args = []string{rest}
		case "wait-exited", "wait-closed", "wait-body", "wait-missing", "conn":
			if strings.HasPrefix(rest, `"`) {
				var s string
				if json.Unmarshal([]byte(rest), &s) != nil {
					return nil, errf("%s wants one word or a JSON string", op)
				}
				st.args = []string{s}
				break
			}
			if rest == "" || strings.ContainsAny(rest, " \t") {
				return nil, errf("%s wants one word", op)
			}
			st.args = []string{rest}
		case "wait-output":
			id, text, ok := strings.Cut(rest, " ")
			if ok && strings.HasPrefix(id, `"`) {
				var s string
				if json.Unmarshal([]byte(id), &s) == nil {
					id = s
				}
			}
			var s string
			if !ok || json.Unmarshal([]byte(text), &s) != nil {
				return nil, errf(`wait-output wants: PID "text"`)
			}
			st.args = []string{id, s}
		case "file", "link":
			name, val, ok := cutWord(rest)
			var s string
			switch {
			case ok && op == "link" && !strings.HasPrefix(val, `"`) && val != "":
				s = val
			case !ok || json.Unmarshal([]byte(val), &s) != nil:
				return nil, errf(`%s wants: NAME "value"`, op)
			}
			if err := checkFixtureName(name); err != nil {
				return nil, errf("%v", err)
			}
			st.args = []string{name, s}
			cur.fixtures = append(cur.fixtures, st)
			continue
		case "dir":
			name, tail, ok := cutWord(rest)
			if !ok || tail != "" {
				return nil, errf("dir wants one NAME")
			}
			if err := checkFixtureName(name); err != nil {
				return nil, errf("%v", err)
			}
			st.args = []string{name}
			cur.fixtures = append(cur.fixtures, st)
			continue
		default:
			return nil, errf("unknown step %q", op)
		}
		cur.steps = append(cur.steps, st)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, s := range seqs {
		if len(s.steps) == 0 {
			return nil, fmt.Errorf("%s:%d: sequence %q has no steps", base, s.line, s.name)
		}
	}
	return seqs, nil
}

// cutWord splits off the first word of s, or the first JSON string when s
// starts with a quote (for names with spaces).
func cutWord(s string) (word, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		d := json.NewDecoder(strings.NewReader(s))
		var w string
		if d.Decode(&w) != nil {
			return "", "", false
		}
		return w, strings.TrimSpace(s[d.InputOffset():]), true
	}
	w, r, _ := strings.Cut(s, " ")
	return w, strings.TrimSpace(r), w != ""
}

// checkFixtureName keeps fixtures inside the scratch directory.
func checkFixtureName(name string) error {
	if name == "" || filepath.IsAbs(name) || filepath.Clean(name) != name || strings.HasPrefix(name, "..") {
		return fmt.Errorf("fixture name %q must be a clean relative path", name)
	}
	return nil
}

// substituteForCheck fills the variables with plausible values, to check
// the syntax of a message before any server exists.
func substituteForCheck(s string) string {
	return expand(s, map[string]string{
		"S": "/tmp/scratch", "HTTP": "http://127.0.0.1:1",
		"SID": "00000000-0000-4000-8000-000000000000", "SID_B": "00000000-0000-4000-8000-000000000001",
	})
}

// expand replaces $NAME (letters, digits, _) with vars[NAME]; an unknown
// name is left as it is.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if v, ok := vars[s[i+1:j]]; ok && j > i+1 {
			b.WriteString(v)
			i = j - 1
			continue
		}
		b.WriteByte('$')
	}
	return b.String()
}

// makeFixtures creates a sequence's fixtures in dir.
func makeFixtures(dir string, fx []step) error {
	for _, f := range fx {
		p := filepath.Join(dir, f.args[0])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		var err error
		switch f.op {
		case "file":
			err = os.WriteFile(p, []byte(f.args[1]), 0o644)
		case "dir":
			err = os.MkdirAll(p, 0o755)
		case "link":
			err = os.Symlink(expand(f.args[1], map[string]string{"S": dir}), p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
