package promptcli

import "github.com/codexd/codexd/appproto"

// ReviewFlags are the target flags of `codexd exec review`, as `codex exec
// review` takes them: exactly one of Uncommitted, Base, Commit (with an
// optional Title) or custom instructions (the prompt argument, "-" for
// stdin).
type ReviewFlags struct {
	Uncommitted bool
	Base        string
	Commit      string
	Title       string
}

// reviewTarget resolves the flags and the prompt into a target. Its errors
// are *UsageError values with Codex's wording where Codex has one.
func reviewTarget(f ReviewFlags, prompt string) (*appproto.ReviewTarget, error) {
	var set []string
	if f.Uncommitted {
		set = append(set, "--uncommitted")
	}
	if f.Base != "" {
		set = append(set, "--base <BRANCH>")
	}
	if f.Commit != "" {
		set = append(set, "--commit <SHA>")
	}
	if len(set) > 1 {
		return nil, usageErrorf("the argument '%s' cannot be used with '%s'", set[0], set[1])
	}
	if f.Title != "" && f.Commit == "" {
		return nil, usageErrorf("--title needs --commit <SHA>")
	}
	if len(set) == 1 && prompt != "" {
		return nil, usageErrorf("custom review instructions cannot be used with %s", set[0])
	}
	switch {
	case f.Uncommitted:
		return &appproto.ReviewTarget{Type: "uncommittedChanges"}, nil
	case f.Base != "":
		return &appproto.ReviewTarget{Type: "baseBranch", Branch: f.Base}, nil
	case f.Commit != "":
		t := &appproto.ReviewTarget{Type: "commit", Sha: f.Commit}
		if f.Title != "" {
			t.Title = &f.Title
		}
		return t, nil
	case prompt == "":
		return nil, usageErrorf("Specify --uncommitted, --base, --commit, or provide custom review instructions")
	}
	return &appproto.ReviewTarget{Type: "custom", Instructions: prompt}, nil
}

// A review's answer reaches exec's output as Codex's does: the app-server
// follows exitedReviewMode with an agentMessage of the same text, which is
// what both output forms print; enteredReviewMode names the review as the
// user's line (human form only).
