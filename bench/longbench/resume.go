//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// quit closes the server's stdin, as a client that leaves does, and waits
// for it to exit (its rollout flushed), killing it after 10 s.
func (s *server) quit() {
	_ = s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// seed makes a thread of two turns on a fresh home and returns the home,
// the thread id and its rollout's path.
func seed(s subject, url string, window int) (home, thread, rollout string, err error) {
	srv, thread, err := startThread(s, url, window)
	if err != nil {
		return "", "", "", err
	}
	for i := 1; i <= 2; i++ {
		if err := srv.turn(thread, fmt.Sprintf("MOCK:hello seed turn %d", i)); err != nil {
			srv.stop()
			return "", "", "", err
		}
	}
	srv.quit()
	err = filepath.WalkDir(filepath.Join(srv.home, "sessions"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") && strings.Contains(p, thread) {
			rollout = p
		}
		return nil
	})
	if rollout == "" {
		err = fmt.Errorf("no rollout of %s under %s", thread, srv.home)
	}
	return srv.home, thread, rollout, err
}

var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	mockMsgRE = regexp.MustCompile(`msg_mock_[0-9]+`)
	ordinalRE = regexp.MustCompile(`^\{"timestamp":"[^"]*","ordinal":[0-9]+`)
)

// inflate grows a rollout to about items thread items (a user message and
// an answer a turn) by repeating its last turn, each copy with ids of its
// own and the lines' ordinals renumbered. Both servers' rollouts have the
// same line shape, so one rewrite serves both.
func inflate(rollout, thread string, items int) error {
	b, err := os.ReadFile(rollout)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	last := -1
	for i, l := range lines {
		if strings.Contains(l, `"type":"task_started"`) {
			last = i
		}
	}
	if last <= 0 {
		return fmt.Errorf("%s: no second turn", rollout)
	}
	tmpl := lines[last:]
	var out strings.Builder
	ordinal := 0
	write := func(l string) {
		if m := ordinalRE.FindString(l); m != "" {
			head := m[:strings.LastIndex(m, ":")+1]
			l = head + strconv.Itoa(ordinal) + l[len(m):]
		}
		ordinal++
		out.WriteString(l)
		out.WriteByte('\n')
	}
	for _, l := range lines {
		write(l)
	}
	counter := 0
	for k := 0; k < items/2-2; k++ {
		ids := map[string]string{}
		for _, l := range tmpl {
			l = uuidRE.ReplaceAllStringFunc(l, func(u string) string {
				if u == thread {
					return u
				}
				n, ok := ids[u]
				if !ok {
					counter++
					n = u[:24] + fmt.Sprintf("%012x", counter)
					ids[u] = n
				}
				return n
			})
			l = mockMsgRE.ReplaceAllStringFunc(l, func(string) string { return fmt.Sprintf("msg_mock_c%d", k) })
			write(l)
		}
	}
	return os.WriteFile(rollout, []byte(out.String()), 0o600)
}

type resumeFigures struct {
	took    []time.Duration
	rssKiB  []int64
	idleKiB []int64
	turns   int
}

// resumeOnce starts s on home, resumes thread and measures the resume's
// time and the RSS after it (the server and its children) and after
// initialize alone.
func resumeOnce(s subject, home, thread string, f *resumeFigures) error {
	srv, err := start(s.name, s.argv, home)
	if err != nil {
		return err
	}
	defer srv.stop()
	if _, err := srv.call(1, "initialize", initialize); err != nil {
		return err
	}
	idle := groupRSSKiB(srv.cmd.Process.Pid)
	t0 := time.Now()
	res, err := srv.call(2, "thread/resume", fmt.Sprintf(`{"threadId":%q}`, thread))
	if err != nil {
		return err
	}
	f.took = append(f.took, time.Since(t0))
	f.rssKiB = append(f.rssKiB, groupRSSKiB(srv.cmd.Process.Pid))
	f.idleKiB = append(f.idleKiB, idle)
	var r struct {
		Thread struct {
			Turns []json.RawMessage `json:"turns"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	f.turns = len(r.Thread.Turns)
	return nil
}

// compactThread resumes thread on home and compacts it.
func compactThread(s subject, home, thread string) error {
	srv, err := start(s.name, s.argv, home)
	if err != nil {
		return err
	}
	if _, err := srv.call(1, "initialize", initialize); err != nil {
		srv.stop()
		return err
	}
	if _, err := srv.call(2, "thread/resume", fmt.Sprintf(`{"threadId":%q}`, thread)); err != nil {
		srv.stop()
		return err
	}
	if _, err := srv.call(3, "thread/compact/start", fmt.Sprintf(`{"threadId":%q}`, thread)); err != nil {
		srv.stop()
		return err
	}
	if _, err := srv.until(isNote("turn/completed")); err != nil {
		srv.stop()
		return err
	}
	srv.quit()
	return nil
}

func resumeBench(s subject, url string, window, items, reps int) error {
	home, thread, rollout, err := seed(s, url, window)
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if err := inflate(rollout, thread, items); err != nil {
		return err
	}
	st, _ := os.Stat(rollout)
	for _, variant := range []string{"never compacted", "compacted"} {
		if variant == "compacted" {
			if err := compactThread(s, home, thread); err != nil {
				return fmt.Errorf("compacting: %w", err)
			}
		}
		var f resumeFigures
		for range reps {
			if err := resumeOnce(s, home, thread, &f); err != nil {
				return fmt.Errorf("%s: %w", variant, err)
			}
		}
		fmt.Printf("%s, %d items (%.1f MiB rollout), %s: resume %s ms (runs %v), RSS after resume %.1f MiB (after initialize %.1f MiB), %d turns\n",
			s.name, items, float64(st.Size())/(1<<20), variant, ms(p50(f.took)), f.took, float64(medianInt(f.rssKiB))/1024, float64(medianInt(f.idleKiB))/1024, f.turns)
	}
	return nil
}

func medianInt(v []int64) int64 {
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[len(c)/2]
}
