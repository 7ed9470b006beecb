package store

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// A line over the old 64 MiB read cap (a model answer that long, say) is
// kept: what the writer writes, the reader reads back, whole. Before, the
// line was skipped when the thread was reloaded, and the answer was gone.
func TestBigLinesAreReadBack(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes and reads a 65 MiB line through one goroutine (TestALineAtTheCapIsReadBack covers the same path small)")
	}
	e := newEnv(t)
	id := testID(95)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", (65<<20)/16) // 65 MiB
	recs := turnRecords("t1", 100, "question")
	recs[3].Event = agent.ItemCompleted{Item: &agent.AgentMessage{ID: "a-t1", Text: big}}
	mustAppend(t, w, recs...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	th, err := e.s.Read(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if th.Skipped != 0 || len(th.Turns) != 1 || len(th.Turns[0].Items) != 2 {
		t.Fatalf("read back: skipped %d, turns %d, history %d; warnings %v", th.Skipped, len(th.Turns), len(th.History), e.logs.warnings())
	}
	if msg, ok := th.Turns[0].Items[1].(*agent.AgentMessage); !ok || msg.Text != big {
		t.Fatal("the big answer was not read back whole")
	}
}

// The writer and the reader agree on the cap: a line of exactly maxLine
// bytes is written and read back whole. The cap is lowered here so that
// the test stays small.
func TestALineAtTheCapIsReadBack(t *testing.T) {
	defer func(old int) { maxLine = old }(maxLine)
	maxLine = 1 << 20
	e := newEnv(t)
	id := testID(97)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	recs := turnRecords("t1", 100, "question")
	line, err := encodeRecord(nil, recs[2], at(0))
	if err != nil {
		t.Fatal(err)
	}
	// The model item's payload grows the line to exactly maxLine bytes.
	pad := maxLine - (len(line) - 1)
	recs[2].Model = []byte(`{"type":"message","role":"user","content":"question` + strings.Repeat("z", pad) + `"}`)
	if line, _ := encodeRecord(nil, recs[2], at(0)); len(line)-1 != maxLine {
		t.Fatalf("line of %d bytes, want %d", len(line)-1, maxLine)
	}
	mustAppend(t, w, recs...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	th, err := e.s.Read(bg, id)
	if err != nil || th.Skipped != 0 || len(th.History) != 1 || len(th.History[0]) < maxLine-100 {
		t.Fatalf("read back: %v, skipped %d, warnings %v", err, th.Skipped, e.logs.warnings())
	}
}

// A record whose line would be over the cap the reader keeps is refused by
// Append with ErrRecordTooLarge, and nothing of its batch is written; a
// longer line in a file (not one the store wrote) is skipped with a
// warning. The cap is lowered here so that the test stays small.
func TestRecordOverTheLineCapIsRefused(t *testing.T) {
	defer func(old int) { maxLine = old }(maxLine)
	maxLine = 1 << 20
	e := newEnv(t)
	id := testID(96)
	w, err := e.s.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, w, turnRecords("t1", 100, "small")...)
	big := turnRecords("t2", 200, "big")
	big[3].Event = agent.ItemCompleted{Item: &agent.AgentMessage{ID: "a-t2", Text: strings.Repeat("x", 2<<20)}}
	err = w.Append(big...)
	if !errors.Is(err, ErrRecordTooLarge) || !strings.Contains(err.Error(), "1048576") {
		t.Fatalf("Append of a line over the cap: %v", err)
	}
	path := w.Path()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 1<<20 {
		t.Fatalf("the rollout: %v (%d bytes)", err, fi.Size())
	}
	th, err := e.s.Read(bg, id)
	if err != nil || len(th.Turns) != 1 || th.Skipped != 0 {
		t.Fatalf("read back: %+v %v", th, err)
	}
	// A longer line that something else put in the file is skipped, and
	// said so.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`{"v":1,"type":"event","payload":"` + strings.Repeat("y", 3<<20) + "\"}\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	th, err = e.s.Read(bg, id)
	if err != nil || len(th.Turns) != 1 || th.Skipped != 1 || !strings.Contains(strings.Join(e.logs.warnings(), "|"), "line too long") {
		t.Fatalf("a foreign long line: %v, skipped %d, warnings %v", err, th.Skipped, e.logs.warnings())
	}
}
