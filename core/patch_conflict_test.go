package core

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
)

// A file the user edits while a patch waits for approval keeps the edit: a
// patch whose hunks still apply is applied to the file as it is now, and
// one that no longer applies, or would remove or overwrite what the user
// wrote, fails and writes nothing. On the main of 2026-12-02 the approved
// patch wrote the contents computed before the prompt, and every edit made
// meanwhile was lost.
func TestPatchApprovalKeepsEditsMadeWhilePending(t *testing.T) {
	cases := []struct {
		name    string
		patch   string
		before  map[string]string // files at the start
		edit    map[string]string // written while the approval is pending ("" removes)
		applied bool
		after   map[string]string // the files at the end ("" absent)
	}{
		{
			name:   "edit elsewhere is kept",
			patch:  "*** Begin Patch\n*** Update File: f.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch",
			before: map[string]string{"f.txt": "one\ntwo\nthree\n"},
			edit:   map[string]string{"f.txt": "zero\none\ntwo\nthree\nfour (the user's)\n"},
			after:  map[string]string{"f.txt": "zero\none\nTWO\nthree\nfour (the user's)\n"}, applied: true,
		},
		{
			name:   "edit of the patched lines conflicts",
			patch:  "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Update File: f.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch",
			before: map[string]string{"f.txt": "one\ntwo\nthree\n"},
			edit:   map[string]string{"f.txt": "one\n2 (the user's)\nthree\n"},
			after:  map[string]string{"f.txt": "one\n2 (the user's)\nthree\n", "new.txt": ""},
		},
		{
			name:   "whitespace edit of a replaced line conflicts",
			patch:  "*** Begin Patch\n*** Update File: f.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch",
			before: map[string]string{"f.txt": "one\ntwo\nthree\n"},
			edit:   map[string]string{"f.txt": "one\ntwo   \nthree\n"},
			after:  map[string]string{"f.txt": "one\ntwo   \nthree\n"},
		},
		{
			name:   "deleting an edited file conflicts",
			patch:  "*** Begin Patch\n*** Delete File: f.txt\n*** End Patch",
			before: map[string]string{"f.txt": "one\n"},
			edit:   map[string]string{"f.txt": "one\nand more (the user's)\n"},
			after:  map[string]string{"f.txt": "one\nand more (the user's)\n"},
		},
		{
			name:   "adding over a file the user created conflicts",
			patch:  "*** Begin Patch\n*** Add File: a.txt\n+from the patch\n*** End Patch",
			before: map[string]string{},
			edit:   map[string]string{"a.txt": "the user's\n"},
			after:  map[string]string{"a.txt": "the user's\n"},
		},
		{
			name:   "moving onto a file the user wrote conflicts",
			patch:  "*** Begin Patch\n*** Update File: f.txt\n*** Move to: g.txt\n@@\n-one\n+ONE\n*** End Patch",
			before: map[string]string{"f.txt": "one\n"},
			edit:   map[string]string{"g.txt": "the user's\n"},
			after:  map[string]string{"f.txt": "one\n", "g.txt": "the user's\n"},
		},
		{
			name:   "a file removed meanwhile conflicts",
			patch:  "*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+ONE\n*** End Patch",
			before: map[string]string{"f.txt": "one\n"},
			edit:   map[string]string{"f.txt": ""},
			after:  map[string]string{"f.txt": ""},
		},
		{
			name:   "an unchanged file is patched",
			patch:  "*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+ONE\n*** End Patch",
			before: map[string]string{"f.txt": "one\n"},
			edit:   map[string]string{},
			after:  map[string]string{"f.txt": "ONE\n"}, applied: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newFakeModel(
				callResponse("call_1", "apply_patch", map[string]any{"input": c.patch}),
				textResponse("msg_2", "done"),
			)
			h := newHarness(t, m, nil)
			for p, s := range c.before {
				writeFile(t, filepath.Join(h.dir, p), s)
			}
			th := h.start(agent.Overrides{Approval: policy(agent.ApprovalUntrusted)})
			h.submit(th, agent.UserInput{Input: text("patch")})
			until(t, th, isPatchApproval)
			for p, s := range c.edit {
				if s == "" {
					if err := os.Remove(filepath.Join(h.dir, p)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeFile(t, filepath.Join(h.dir, p), s)
			}
			h.submit(th, agent.PatchDecision{CallID: "call_1", Decision: agent.Accept})
			evs := until(t, th, isTurnCompleted)
			for p, want := range c.after {
				b, err := os.ReadFile(filepath.Join(h.dir, p))
				switch {
				case want == "" && err == nil:
					t.Errorf("%s exists: %q", p, b)
				case want != "" && string(b) != want:
					t.Errorf("%s = %q (%v), want %q", p, b, err, want)
				}
			}
			fc := itemsCompleted[*agent.FileChange](evs)
			if len(fc) != 1 {
				t.Fatalf("file changes %s", describe(evs))
			}
			m.request(t)
			out := lastOutput(t, m.request(t), "call_1")
			if c.applied {
				if fc[0].Status != agent.ItemStatusCompleted || !strings.HasPrefix(out, "Exit code: 0\n") {
					t.Fatalf("not applied: %s; model got %q", fc[0].Status, out)
				}
				return
			}
			if fc[0].Status != agent.ItemStatusFailed {
				t.Errorf("status %s, want failed", fc[0].Status)
			}
			if !strings.Contains(out, "changed while the patch was waiting for approval") || !strings.Contains(out, "nothing was written") {
				t.Errorf("model got %q", out)
			}
		})
	}
}
