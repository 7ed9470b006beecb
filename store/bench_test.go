package store

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// BenchmarkAppend: one completed item per Append call (one write(2) each,
// no fsync), the core's common case.
func BenchmarkAppend(b *testing.B) {
	e := newEnv(b)
	w, err := e.s.Create(bg, meta(testID(1), 0))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	mustAppend(b, w, turnRecords("t0", 0, "warm up")[:2]...)
	rec := Record{TurnID: "t0", Event: agent.ItemCompleted{Item: &agent.AgentMessage{ID: "msg_1", Text: strings.Repeat("an answer of some length ", 8)}}}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendTurn: a whole turn (5 records, one Append each), ending
// with the TurnCompleted that fsyncs the file and updates the index.
func BenchmarkAppendTurn(b *testing.B) {
	e := newEnv(b)
	w, err := e.s.Create(bg, meta(testID(1), 0))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	recs := turnRecords("t", 0, "a question of some length")
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range recs {
			if err := w.Append(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// rollout1000 writes a 1,000-turn rollout: each turn a user message, a
// command with output, an answer, model items and a token count.
func rollout1000(b *testing.B, e *env, id string) int64 {
	m := meta(id, 0)
	var sb strings.Builder
	out := strings.Repeat("output line\n", 20)
	exit := 0
	recs := []Record{}
	for i := range 1000 {
		turn := fmt.Sprintf("t%d", i)
		n := i * 100
		tr := turnRecords(turn, n, fmt.Sprintf("question %d", i))
		recs = append(recs, tr[:3]...)
		recs = append(recs,
			Record{Time: at(n + 5), TurnID: turn, Model: []byte(`{"type":"function_call","call_id":"c","name":"exec_command","arguments":"{\"cmd\":\"ls -la\"}"}`)},
			Record{Time: at(n + 6), TurnID: turn, Event: agent.ItemCompleted{Item: &agent.CommandExecution{ID: "call_" + turn, Command: "ls -la", Cwd: "/w", Status: agent.ItemStatusCompleted, Output: &out, ExitCode: &exit}}},
			Record{Time: at(n + 7), TurnID: turn, Event: agent.TokenCount{Info: agent.TokenUsageInfo{Total: agent.TokenUsage{Input: int64(i)}}}},
		)
		recs = append(recs, tr[3:]...)
	}
	for _, l := range lines(b, m, recs...) {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	path := rolloutPath(e.home, m.CreatedAt, id)
	writeRaw(b, path, []string{strings.TrimSuffix(sb.String(), "\n")}, false)
	fi, _ := os.Stat(path)
	return fi.Size()
}

func BenchmarkRebuild1000Turns(b *testing.B) {
	e := newEnv(b)
	id := testID(2)
	size := rollout1000(b, e, id)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		th, err := e.s.Read(bg, id)
		if err != nil || len(th.Turns) != 1000 {
			b.Fatalf("%v %d", err, len(th.Turns))
		}
	}
}

// index10000 fills the index with 10,000 threads: four cwds, three
// providers, two sources.
func index10000(b *testing.B) *env {
	e := newEnv(b)
	tx, err := e.s.ix.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		info := agent.ThreadInfo{
			ID: testID(i), Path: fmt.Sprintf("/nowhere/%d", i), CreatedAt: at(i * 10), UpdatedAt: at(100_000 - i),
			Preview: fmt.Sprintf("fix bug number %d in the parser", i), Cwd: fmt.Sprintf("/work/%d", i%4),
			ModelProvider: []string{"openai", "mock", "ollama"}[i%3], Source: []string{"cli", "appServer"}[i%2],
		}
		if _, err := tx.Exec(`INSERT INTO threads (id, path, created_at, updated_at, preview, name, search, cwd, model,
			model_provider, source, thread_source, forked_from, cli_version, archived, size, mtime)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, rowArgs(&row{info: info})...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkList10000(b *testing.B) {
	e := index10000(b)
	for _, c := range []struct {
		name string
		q    agent.ThreadQuery
	}{
		{"first-page", agent.ThreadQuery{}},
		{"cwd+provider", agent.ThreadQuery{Cwd: "/work/1", ModelProviders: []string{"mock", "ollama"}}},
		{"search", agent.ThreadQuery{SearchTerm: "NUMBER 99", SortKey: SortUpdatedAt}},
		{"cwd-deep-page", agent.ThreadQuery{Cwd: "/work/2"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			if c.name == "cwd-deep-page" {
				// A cursor 2,000 rows in: keyset paging costs the same.
				q.Limit = 1000
				for range 2 {
					p, _ := e.s.List(bg, q)
					q.Cursor = p.NextCursor
				}
				q.Limit = 0
			}
			b.ReportAllocs()
			for b.Loop() {
				p, err := e.s.List(bg, q)
				if err != nil || len(p.Threads) == 0 {
					b.Fatalf("%v %d", err, len(p.Threads))
				}
			}
		})
	}
}
