package modelclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// streamBody streams body through a Client without a network.
func streamBody(t *testing.T, body []byte) ([]Event, error) {
	t.Helper()
	c, err := New(provider("http://bounds.invalid"), Options{
		HTTPClient: &http.Client{Transport: fakeTransport{body}},
		Getenv:     func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Stream(context.Background(), Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return collect(s)
}

const completedEvent = "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n"

// An event larger than MaxEventBytes ends the stream with ErrEventTooLarge,
// whether it is one long line or many data lines (which the SSE framing
// joins without any bound of its own), and is not reported as a cut
// stream (which would be retried).
func TestStreamEventTooLarge(t *testing.T) {
	line := func(n int) string {
		return `data: {"type":"response.output_text.delta","item_id":"m","delta":"` + strings.Repeat("a", n) + "\"}\n"
	}
	var many bytes.Buffer
	for range MaxEventBytes/(1<<20) + 8 {
		many.WriteString("data: " + strings.Repeat("b", 1<<20) + "\n")
	}
	many.WriteString("\n" + completedEvent)
	for name, body := range map[string][]byte{
		"one line":   []byte(line(MaxEventBytes+1024) + "\n" + completedEvent),
		"many lines": many.Bytes(),
	} {
		t.Run(name, func(t *testing.T) {
			evs, end := streamBody(t, body)
			if !errors.Is(end, ErrEventTooLarge) || errors.Is(end, ErrStreamCut) {
				t.Fatalf("ended with %v after %d events, want ErrEventTooLarge", end, len(evs))
			}
			if len(evs) != 0 {
				t.Fatalf("events before the oversized one: %d", len(evs))
			}
			if !strings.Contains(end.Error(), fmt.Sprint(MaxEventBytes)) {
				t.Fatalf("the error does not name the limit: %v", end)
			}
		})
	}
}

// The bound is on one event, not on the stream: a long line just under it
// followed by many small events (more than the bound in all) reads to the
// end. (They do not parse, so they are skipped, and quickly: the framing is
// what is tested.)
func TestStreamManyEventsUnderTheBound(t *testing.T) {
	var b bytes.Buffer
	big := MaxEventBytes - 4096
	b.WriteString("data: " + strings.Repeat("#", big) + "\n\n")
	small := "data: " + strings.Repeat("#", 1000) + "\n\n"
	for b.Len() < MaxEventBytes+big+(1<<20) {
		b.WriteString(small)
	}
	b.WriteString(completedEvent)
	evs, end := streamBody(t, b.Bytes())
	if end != io.EOF || len(evs) != 1 {
		t.Fatalf("ended with %v after %d events, want EOF after Completed", end, len(evs))
	}
}

// An index the Responses API cannot send (negative, or past a u32, which
// Codex's decoder refuses) skips the event, as an event that does not
// parse is skipped; in-range indices pass.
func TestStreamSkipsImpossibleIndices(t *testing.T) {
	body := strings.Join([]string{
		`data: {"type":"response.reasoning_summary_part.added","item_id":"r","summary_index":-1}`,
		`data: {"type":"response.reasoning_summary_text.delta","item_id":"r","summary_index":-1,"delta":"x"}`,
		`data: {"type":"response.reasoning_text.delta","item_id":"r","content_index":-5,"delta":"x"}`,
		`data: {"type":"response.output_text.delta","item_id":"m","content_index":-1,"delta":"x"}`,
		`data: {"type":"response.output_text.delta","item_id":"m","output_index":-1,"delta":"x"}`,
		`data: {"type":"response.reasoning_text.delta","item_id":"r","content_index":4294967296,"delta":"x"}`,
		`data: {"type":"response.output_item.added","output_index":-2,"item":{"type":"message","id":"m"}}`,
		`data: {"type":"response.reasoning_summary_text.delta","item_id":"r","summary_index":3,"delta":"ok"}`,
		`data: {"type":"response.reasoning_text.delta","item_id":"r","content_index":4294967295,"delta":"ok"}`,
	}, "\n\n") + "\n\n" + completedEvent
	evs, end := streamBody(t, []byte(body))
	if end != io.EOF {
		t.Fatal(end)
	}
	want := []Event{
		ReasoningSummaryTextDelta{ItemID: "r", SummaryIndex: 3, Delta: "ok"},
		ReasoningTextDelta{ItemID: "r", ContentIndex: 4294967295, Delta: "ok"},
		Completed{ResponseID: "r"},
	}
	if fmt.Sprint(evs) != fmt.Sprint(want) {
		t.Fatalf("events\n%v\nwant\n%v", evs, want)
	}
}
