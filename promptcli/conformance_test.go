package promptcli

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/appserver"
	"github.com/codexd/codexd/config"
)

// TestJSONLikeCodex runs the scenarios of testdata/codex-0.169 (what the
// real `codex exec --json` 0.169 printed against the same mock model, see
// its README) and compares: the same events in the same order (Codex's
// warning items aside: its offline model catalog warns about the mock's
// model), and every event with the same members, in the same order, with
// values of the same kinds.
func TestJSONLikeCodex(t *testing.T) {
	scenarios := []struct {
		name   string
		prompt string
		lo     config.LoadOptions
	}{
		{"hello", "MOCK:hello", config.LoadOptions{}},
		{"list", "list the files here", config.LoadOptions{}},
		{"error", "MOCK:error", noRetries},
		{"cut", "MOCK:cut", config.LoadOptions{Overrides: []string{"model_providers.mock.stream_max_retries=1"}}},
		{"reason", "MOCK:reason", config.LoadOptions{}},
		// Codex offered the mock's model no apply_patch tool, so its capture
		// sent the patch through the shell (apply_patch <<'EOF'); the file
		// change is the same either way.
		{"patch", patchPrompt, config.LoadOptions{SandboxMode: config.SandboxWorkspaceWrite}},
	}
	shapes := map[string]string{} // signature -> Codex's shape
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "codex-0.169", sc.name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			codex := decodeEvents(t, string(b))
			for _, ev := range codex {
				shapes[ev.sig()] = shape(t, ev.raw)
			}
			e := newEnv(t)
			r := e.exec(Options{Prompt: sc.prompt, JSON: true}, sc.lo)
			ours := decodeEvents(t, r.stdout)
			if got, want := sigs(ours), sigs(codex); !slices.Equal(got, want) {
				t.Fatalf("events\n got %q\nwant %q", got, want)
			}
			for _, ev := range ours {
				if want, ok := shapes[ev.sig()]; ok {
					if got := shape(t, ev.raw); got != want {
						t.Errorf("%s:\n got %s\nwant %s", ev.sig(), got, want)
					}
				}
			}
		})
	}
	// A warning is an item.completed of type error, as Codex's.
	var out strings.Builder
	js := newJSONSink(&out, io.Discard)
	js.notification(appserver.Message{Method: appproto.Warning.Name(), Params: appproto.WarningNotification{Message: "careful"}}, nil)
	if got, want := shape(t, strings.TrimSpace(out.String())), shapes["item.completed:error"]; got != want || want == "" {
		t.Errorf("warning item: got %s, want %s", got, want)
	}
	// And an interrupted turn ends with no event at all.
	b, err := os.ReadFile(filepath.Join("testdata", "codex-0.169", "interrupted.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sigs(decodeEvents(t, string(b))); !slices.Equal(got, []string{"thread.started", "turn.started"}) {
		t.Errorf("Codex's interrupted capture: %q", got)
	}
	if !strings.Contains(string(b), `"type":"turn.started"`) {
		t.Error("capture unreadable")
	}
}
