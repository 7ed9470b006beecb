//go:build linux

// Command longbench measures long sessions on codexd's app-server and on
// Codex 0.169's, side by side on the same mock model (package mockmodel,
// served in process): the latency of every turn of a long session at a
// small model_context_window (compaction keeps it flat, or does not), and
// the time and memory of resuming a thread of many items, never compacted
// and compacted. Run it in a network namespace with only loopback (see
// README.md); each server gets a throwaway CODEX_HOME and HOME.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

type subject struct {
	name string
	argv []string
}

func main() {
	codex := flag.String("codex", "", "Codex 0.169's native binary (empty: codexd only)")
	codexd := flag.String("codexd", "", "the codexd binary")
	mode := flag.String("mode", "session", "session (long-session turn latency) or resume (resume of a big thread)")
	turns := flag.Int("turns", 300, "session: turns")
	window := flag.Int("window", 32000, "model_context_window")
	pad := flag.Int("pad", 2000, "session: bytes of text each user message adds")
	items := flag.Int("items", 10000, "resume: items of the thread")
	reps := flag.Int("reps", 3, "resume: repetitions per server and variant")
	runs := flag.Int("runs", 1, "session: sessions per server (all reported, then the median ratio)")
	flag.Parse()
	var subjects []subject
	if *codex != "" {
		subjects = append(subjects, subject{"Codex 0.169", []string{*codex, "app-server"}})
	}
	if *codexd != "" {
		subjects = append(subjects, subject{"codexd", []string{*codexd, "app-server"}})
	}
	mock := mockmodel.New(mockmodel.Options{})
	url, err := mock.Start("127.0.0.1:0")
	if err != nil {
		fatalf("mock: %v", err)
	}
	if !strings.HasSuffix(url, "/v1") {
		url = strings.TrimSuffix(url, "/") + "/v1"
	}
	defer mock.Close()
	switch *mode {
	case "session":
		for _, s := range subjects {
			if err := sessionBench(s, mock, url, *window, *turns, *pad, *runs); err != nil {
				fatalf("%s: %v", s.name, err)
			}
		}
	case "resume":
		for _, s := range subjects {
			if err := resumeBench(s, url, *window, *items, *reps); err != nil {
				fatalf("%s: %v", s.name, err)
			}
		}
	default:
		fatalf("unknown mode %q", *mode)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "longbench: "+format+"\n", args...)
	os.Exit(1)
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func countAnswers(m *mockmodel.Server, answer string) int {
	n := 0
	for _, ex := range m.Requests() {
		if ex.Answer == answer {
			n++
		}
	}
	return n
}

// startThread starts s on a fresh home and a thread on it.
func startThread(s subject, url string, window int) (*server, string, error) {
	home, err := newHome(url, window)
	if err != nil {
		return nil, "", err
	}
	srv, err := start(s.name, s.argv, home)
	if err != nil {
		return nil, "", err
	}
	if _, err := srv.call(1, "initialize", initialize); err != nil {
		srv.stop()
		return nil, "", err
	}
	res, err := srv.call(2, "thread/start", `{}`)
	if err != nil {
		srv.stop()
		return nil, "", err
	}
	var ts struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(res, &ts); err != nil {
		srv.stop()
		return nil, "", err
	}
	return srv, ts.Thread.ID, nil
}

var nextID = 100

// turn runs one turn of text and waits for its end; it fails unless the
// turn completed.
func (s *server) turn(thread, text string) error {
	nextID++
	b, _ := json.Marshal(text)
	if err := s.send(fmt.Sprintf(`{"method":"turn/start","id":%d,"params":{"threadId":%q,"input":[{"type":"text","text":%s,"text_elements":[]}]}}`, nextID, thread, b)); err != nil {
		return err
	}
	m, err := s.until(isNote("turn/completed"))
	if err != nil {
		return err
	}
	var p struct {
		Turn struct {
			Status string          `json:"status"`
			Error  json.RawMessage `json:"error"`
		} `json:"turn"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return err
	}
	if p.Turn.Status != "completed" {
		return fmt.Errorf("turn %s: %s", p.Turn.Status, p.Turn.Error)
	}
	return nil
}

func p50(ds []time.Duration) time.Duration {
	c := append([]time.Duration(nil), ds...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[len(c)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }
