package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
)

// fill sets every field reachable from v to a distinct non-zero value:
// strings, numbers, bools, times, pointers and two-element slices. A field
// added to an agent type is then non-zero in the round-trip tests below,
// and lost unless the codec carries it.
func fill(v reflect.Value, n *int) {
	*n++
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(t0.Add(time.Duration(*n) * time.Microsecond)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", *n%5) + v.Type().Name())
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.Interface:
		// set by the caller (an Item inside an event)
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func filled[T any]() T {
	var x T
	n := 0
	fill(reflect.ValueOf(&x).Elem(), &n)
	return x
}

func allItems() []agent.Item {
	um, am, r := filled[agent.UserMessage](), filled[agent.AgentMessage](), filled[agent.Reasoning]()
	ce, fc, p := filled[agent.CommandExecution](), filled[agent.FileChange](), filled[agent.Plan]()
	cc, er, xr := filled[agent.ContextCompaction](), filled[agent.EnteredReviewMode](), filled[agent.ExitedReviewMode]()
	um.ID, am.ID, r.ID, ce.ID, fc.ID, p.ID = "i-um", "i-am", "i-r", "i-ce", "i-fc", "i-p"
	cc.ID, er.ID, xr.ID = "i-cc", "i-er", "i-xr"
	// Codex keeps a patch's changes by path: one change per path.
	fc.Changes[1].Path = "other/" + fc.Changes[1].Path
	// An image view's path is absolute (Codex writes a file: URI).
	iv := &agent.ImageView{ID: "i-iv", Path: "/work/a b.png"}
	return []agent.Item{&um, &am, &r, &ce, &fc, &p, &cc, &er, &xr, iv}
}

func roundTrip(t *testing.T, rec Record) entry {
	t.Helper()
	b, err := encodeRecord(nil, rec, at(0))
	if err != nil {
		t.Fatalf("encode %T: %v", rec.Event, err)
	}
	if strings.Count(string(b), "\n") != 1 || b[len(b)-1] != '\n' {
		t.Fatalf("encoded record is not one line: %q", b)
	}
	e, err := decodeLine(b[:len(b)-1])
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	// Codex's lines name the turn of what belongs to one; a model item,
	// a token count or a name carries none.
	turn := rec.TurnID
	switch rec.Event.(type) {
	case agent.TurnStarted, agent.ItemCompleted, agent.TurnCompleted, agent.SettingsUpdated:
	default:
		turn = ""
	}
	if !e.Time.Equal(rec.Time) || e.TurnID != turn {
		t.Fatalf("envelope: got %v %q, want %v %q", e.Time, e.TurnID, rec.Time, turn)
	}
	return e
}

func TestCodecRoundTripEveryItemType(t *testing.T) {
	items := allItems()
	// The set of item types is closed; a new one must get a codec here.
	if len(items) != 10 {
		t.Fatalf("%d item types", len(items))
	}
	for _, it := range items {
		t.Run(reflect.TypeOf(it).Elem().Name(), func(t *testing.T) {
			rec := Record{Time: at(1), TurnID: "turn-1", Event: agent.ItemCompleted{Item: it}}
			e := roundTrip(t, rec)
			if !reflect.DeepEqual(e.Event, rec.Event) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", e.Event.(agent.ItemCompleted).Item, it)
			}
		})
	}
}

func TestCodecRoundTripEveryKeptEvent(t *testing.T) {
	ic := agent.ItemCompleted{Item: allItems()[3]}
	events := []agent.EventMsg{
		filled[agent.TurnStarted](), ic, filled[agent.TurnCompleted](), filled[agent.TokenCount](),
		filled[agent.SettingsUpdated](), filled[agent.ThreadNameUpdated](),
	}
	for _, ev := range events {
		if !Kept(ev) {
			t.Fatalf("%T is not kept", ev)
		}
		t.Run(reflect.TypeOf(ev).Name(), func(t *testing.T) {
			rec := Record{Time: at(2), TurnID: "turn-2", Event: ev}
			if e := roundTrip(t, rec); !reflect.DeepEqual(e.Event, ev) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", e.Event, ev)
			}
		})
	}
	// Zero values survive too: a nil error, empty settings.
	for _, ev := range []agent.EventMsg{agent.TurnCompleted{Status: agent.TurnStatusCompleted}, agent.SettingsUpdated{}, agent.ThreadNameUpdated{}} {
		if e := roundTrip(t, Record{Time: at(3), Event: ev}); !reflect.DeepEqual(e.Event, ev) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", e.Event, ev)
		}
	}
}

func TestCodecPointersToZeroValuesSurvive(t *testing.T) {
	empty, zero := "", 0
	it := &agent.CommandExecution{ID: "c", Output: &empty, ExitCode: &zero}
	e := roundTrip(t, Record{Time: at(1), Event: agent.ItemCompleted{Item: it}})
	got := e.Event.(agent.ItemCompleted).Item.(*agent.CommandExecution)
	if got.Output == nil || *got.Output != "" || got.ExitCode == nil || *got.ExitCode != 0 {
		t.Fatalf("got output %v exit %v", got.Output, got.ExitCode)
	}
	e = roundTrip(t, Record{Time: at(1), Event: agent.ItemCompleted{Item: &agent.CommandExecution{ID: "c"}}})
	got = e.Event.(agent.ItemCompleted).Item.(*agent.CommandExecution)
	if got.Output != nil || got.ExitCode != nil {
		t.Fatalf("nil pointers came back set: %v %v", got.Output, got.ExitCode)
	}
}

func TestCodecMetaRoundTrip(t *testing.T) {
	m := filled[ThreadMeta]()
	m.ID, m.ForkedFromID = testID(1), testID(2)
	b, err := encodeMetaLine(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	e, err := decodeLine(b[:len(b)-1])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*e.Meta, m) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", *e.Meta, m)
	}
	if !strings.HasPrefix(string(b), `{"timestamp":"2024-03-04T05:06:07.`) || !strings.Contains(string(b), `"ordinal":0,"type":"session_meta","payload":{"id":"`+testID(1)) {
		t.Fatalf("meta line: %s", b)
	}
}

func TestCodecInvalidUTF8IsReplacedNotRefused(t *testing.T) {
	out := "ok \xff\xfe done"
	it := &agent.CommandExecution{ID: "c", Output: &out}
	e := roundTrip(t, Record{Time: at(1), Event: agent.ItemCompleted{Item: it}})
	got := *e.Event.(agent.ItemCompleted).Item.(*agent.CommandExecution).Output
	if got != "ok \ufffd\ufffd done" {
		t.Fatalf("got %q", got)
	}
}

func TestCodecModelItemsAreKeptVerbatim(t *testing.T) {
	in := []byte("{\n  \"type\": \"function_call\",\n  \"arguments\": \"{\\\"cmd\\\": \\\"ls\\\"}\",\n  \"n\": 1.50\n}")
	e := roundTrip(t, Record{Time: at(1), TurnID: "t", Model: in})
	want := `{"type":"function_call","arguments":"{\"cmd\": \"ls\"}","n":1.50}`
	if string(e.Model) != want {
		t.Fatalf("got %s\nwant %s", e.Model, want)
	}
	// Not ours to judge: duplicate names stay as the core wrote them.
	if e := roundTrip(t, Record{Time: at(1), Model: []byte(`{"a":1, "a":2}`)}); string(e.Model) != `{"a":1,"a":2}` {
		t.Fatalf("got %s", e.Model)
	}
	if _, err := encodeRecord(nil, Record{Model: []byte(`{"a":`)}, at(0)); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("invalid model item: %v", err)
	}
	if _, err := encodeRecord(nil, Record{Model: []byte(`1 2`)}, at(0)); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("two values: %v", err)
	}
}

func TestCodecRefusesBadRecords(t *testing.T) {
	for name, rec := range map[string]Record{
		"empty":       {},
		"both":        {Event: agent.TurnStarted{}, Model: []byte(`{}`)},
		"not kept":    {Event: agent.AgentMessageDelta{}},
		"nil item":    {Event: agent.ItemCompleted{}},
		"no codec":    {Event: agent.ItemCompleted{Item: foreignItem{}}},
		"nil event":   {Event: agent.EventMsg(nil), Model: nil},
		"model nulls": {Model: []byte{}},
	} {
		if _, err := encodeRecord(nil, rec, at(0)); !errors.Is(err, ErrInvalidRecord) {
			t.Errorf("%s: got %v, want ErrInvalidRecord", name, err)
		}
	}
}

type foreignItem struct{ agent.Item }

func TestDecodeLineSkipsWhatItCannotRead(t *testing.T) {
	for _, c := range []struct {
		line  string
		quiet bool
	}{
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":2,"payload":{"type":"turn_started"}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","payload":{"type":"turn_started"}}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"agent_message_delta"}}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"world_state","payload":{}}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"DynamicToolCall","id":"x"}}}`, true}, // a Codex item codexd has no type for (McpToolCall and WebSearch have one now)
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"item_completed"}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_started","started_at":"x"}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"not-a-uuid"}}`, false},
		{`{"timestamp":"yesterday","type":"event_msg","payload":{"type":"task_started"}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"compacted","payload":[]}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":1}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":1,"payload":{"type":"item_completed"}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":1,"payload":{"type":"item_completed","item":{"type":"hologram","id":"x"}}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":1,"payload":null}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":1,"payload":{"type":"turn_started","kind":7}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":1,"payload":{"type":"hologram_shown"}}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"telemetry","v":1,"payload":{}}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"event","v":1,"payload":{"type":"turn_sta`, false},
		{`garbage`, false},
		{`[]`, false},
		{``, false},
	} {
		_, err := decodeLine([]byte(c.line))
		if err == nil {
			t.Errorf("%s: decoded", c.line)
			continue
		}
		if errors.Is(err, errQuiet) != c.quiet {
			t.Errorf("%s: quiet=%v, want %v (%v)", c.line, !c.quiet, c.quiet, err)
		}
	}
}
