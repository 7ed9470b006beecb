// Package review holds what a review turn says and reads: the reviewer's
// instructions, what each review target asks the model to look at (and the
// git commands that show it), the hint a client shows, and the parsing and
// rendering of the model's findings in Codex's format.
//
// It is pure: it runs no command and no model, and knows no turn. The core
// runs the review; the model runs the git commands through the thread's
// tools, in the thread's cwd, through the exec-server. It must never import
// the core, a model client or a front-end.
package review

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/codexd/codexd/agent"
)

// Instructions replace the base instructions for the reviewer. Our own
// words; the output format is Codex's, so that Codex's clients show the
// findings.
const Instructions = `You are reviewing code changes as a careful senior engineer. Your job is to find real problems in the change under review, not to praise it or restate it.

How to work:
- Look at the change yourself with the commands you are given (run them with exec_command in the working directory). Read surrounding code where you need context. Do not modify any file.
- Report only problems the author would want to fix: bugs, broken edge cases, security issues, data loss, races, performance traps, misleading names or comments, missing error handling. Skip matters of taste and anything pre-existing that the change did not touch.
- Each finding must be specific: the file, the line range (keep it short, inside the change), what goes wrong and under which input, and, briefly, how to fix it.
- Prioritise: P0 breaks things for everyone and blocks release; P1 is urgent; P2 should be fixed; P3 is minor.
- If the change is fine, say so and report no findings.

Answer with one JSON object and nothing else, in this shape:
{
  "findings": [
    {
      "title": "[P1] Short imperative title, at most 80 characters",
      "body": "What is wrong, when it happens, and why it matters (Markdown).",
      "confidence_score": 0.8,
      "priority": 1,
      "code_location": {
        "absolute_file_path": "/absolute/path/to/file",
        "line_range": {"start": 10, "end": 12}
      }
    }
  ],
  "overall_correctness": "patch is correct",
  "overall_explanation": "One to three sentences on whether the change is correct, and why.",
  "overall_confidence_score": 0.8
}
"overall_correctness" is "patch is correct" or "patch is incorrect"; scores are between 0 and 1; priority is 0 to 3.`

// Validate cleans a target as Codex's review/start does: the member of the
// variant must not be blank. The error is the message a client gets.
func Validate(t agent.ReviewTarget) (agent.ReviewTarget, error) {
	t.Branch = strings.TrimSpace(t.Branch)
	t.SHA = strings.TrimSpace(t.SHA)
	t.Title = strings.TrimSpace(t.Title)
	t.Instructions = strings.TrimSpace(t.Instructions)
	switch t.Type {
	case "uncommittedChanges":
	case "baseBranch":
		if t.Branch == "" {
			return t, fmt.Errorf("branch must not be empty")
		}
	case "commit":
		if t.SHA == "" {
			return t, fmt.Errorf("sha must not be empty")
		}
	case "custom":
		if t.Instructions == "" {
			return t, fmt.Errorf("instructions must not be empty")
		}
	default:
		return t, fmt.Errorf("unknown review target %q", t.Type)
	}
	return t, nil
}

// Prompt is the user message that starts the review: what to review and
// the git commands that show it.
func Prompt(t agent.ReviewTarget) string {
	switch t.Type {
	case "uncommittedChanges":
		return "Review the changes in the working tree that are not committed yet: staged, unstaged and untracked files.\n\n" +
			"See them with `git status --short`, `git diff` (unstaged), `git diff --cached` (staged), and read the untracked files that `git status` lists. Then give your findings, most important first."
	case "baseBranch":
		return fmt.Sprintf("Review what the current branch would merge into %[1]q.\n\n"+
			"First find the merge base with the branch's upstream, falling back to the branch itself: "+
			"`git merge-base HEAD \"$(git rev-parse --abbrev-ref %[1]q@{upstream} 2>/dev/null || echo %[1]q)\"`. "+
			"Then see the changes with `git diff <merge-base>` (and `git log --oneline <merge-base>..HEAD` for the commits). Then give your findings, most important first.", t.Branch)
	case "commit":
		what := fmt.Sprintf("commit %s", t.SHA)
		if t.Title != "" {
			what = fmt.Sprintf("commit %s (%q)", t.SHA, t.Title)
		}
		return fmt.Sprintf("Review the changes made by %s.\n\nSee them with `git show %s`. Then give your findings, most important first.", what, t.SHA)
	case "custom":
		return t.Instructions
	}
	return ""
}

// Hint names the review for the user, with Codex's wording (clients match
// on it); see agent.ReviewTarget.Hint.
func Hint(t agent.ReviewTarget) string { return t.Hint() }

// Output is the model's review, in Codex's ReviewOutputEvent shape.
type Output struct {
	Findings               []Finding `json:"findings"`
	OverallCorrectness     string    `json:"overall_correctness"`
	OverallExplanation     string    `json:"overall_explanation"`
	OverallConfidenceScore float64   `json:"overall_confidence_score"`
}

// Finding is one problem the reviewer found.
type Finding struct {
	Title           string       `json:"title"`
	Body            string       `json:"body"`
	ConfidenceScore float64      `json:"confidence_score"`
	Priority        int          `json:"priority"`
	CodeLocation    CodeLocation `json:"code_location"`
}

// CodeLocation is where a finding is.
type CodeLocation struct {
	AbsoluteFilePath string    `json:"absolute_file_path"`
	LineRange        LineRange `json:"line_range"`
}

// LineRange is an inclusive range of lines, from 1.
type LineRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Parse reads the model's answer as Codex does: the whole text as the JSON
// object, else the text from its first '{' to its last '}', else the text
// itself as the overall explanation. It never fails.
func Parse(text string) Output {
	if out, ok := parseJSON(text); ok {
		return out
	}
	if i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}'); i >= 0 && j > i {
		if out, ok := parseJSON(text[i : j+1]); ok {
			return out
		}
	}
	return Output{OverallExplanation: text}
}

func parseJSON(s string) (Output, bool) {
	var out Output
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return Output{}, false
	}
	return out, true
}

// FallbackMessage is the review text when the model said nothing usable
// (Codex's words, which its clients show).
const FallbackMessage = "Reviewer failed to output a response."

// Render is the review as text, as Codex shows it in exitedReviewMode: the
// overall explanation, then the findings with their locations.
func Render(o Output) string {
	var sections []string
	if e := strings.TrimSpace(o.OverallExplanation); e != "" {
		sections = append(sections, e)
	}
	if len(o.Findings) > 0 {
		sections = append(sections, findingsBlock(o.Findings))
	}
	if len(sections) == 0 {
		return FallbackMessage
	}
	return strings.Join(sections, "\n\n")
}

func findingsBlock(fs []Finding) string {
	var b strings.Builder
	if len(fs) > 1 {
		b.WriteString("Full review comments:")
	} else {
		b.WriteString("Review comment:")
	}
	for _, f := range fs {
		loc := f.CodeLocation
		fmt.Fprintf(&b, "\n\n- %s — %s:%d-%d", f.Title, loc.AbsoluteFilePath, loc.LineRange.Start, loc.LineRange.End)
		for _, line := range strings.Split(f.Body, "\n") {
			if f.Body == "" {
				break
			}
			b.WriteString("\n  " + line)
		}
	}
	return b.String()
}

// HistoryNote is what the thread's history keeps of a review, so that the
// conversation can go on from it ("fix the first finding").
func HistoryNote(hint, rendered string) string {
	return fmt.Sprintf("<review_result>\nThe user had the %s reviewed; the reviewer answered:\n\n%s\n</review_result>", hint, rendered)
}

// ModelFromConfig reads review_model through get (the caller's config
// path: the profile in use, else the top level): the model review turns
// run on; empty when unset.
func ModelFromConfig(get func(key string) (any, bool)) (string, error) {
	v, ok := get("review_model")
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("review_model: expected a model name")
	}
	return s, nil
}
