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

// reviewItem shows a review's items as the exec output shows them, as
// Codex's exec does: the review's text is the answer (an agent message),
// and entering review mode names the review as the user's message.
func reviewItem(it appproto.ThreadItem) appproto.ThreadItem {
	if x := it.ExitedReviewMode; x != nil {
		final := "final_answer"
		return appproto.ThreadItem{AgentMessage: &appproto.AgentMessageItem{Type: "agentMessage", ID: x.ID,
			Text: x.Review, Phase: &final, ItemTimes: x.ItemTimes}}
	}
	return it
}
