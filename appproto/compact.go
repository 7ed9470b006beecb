package appproto

import "github.com/codexd/codexd/jsonrpc"

// ContextCompactionItem marks where a thread's history was compacted.
type ContextCompactionItem struct {
	Type string `json:"type"` // "contextCompaction"
	ID   string `json:"id"`
	ItemTimes
}

// ReviewModeItem is an enteredReviewMode or exitedReviewMode item: Review
// is what is reviewed (entered) or the review's text (exited).
type ReviewModeItem struct {
	Type   string `json:"type"` // "enteredReviewMode" or "exitedReviewMode"
	ID     string `json:"id"`
	Review string `json:"review"`
	ItemTimes
}

// ThreadCompactStartParams are the params of thread/compact/start.
type ThreadCompactStartParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadCompactStartResponse is thread/compact/start's (empty) answer.
type ThreadCompactStartResponse struct{}

// ReviewStartParams are the params of review/start.
type ReviewStartParams struct {
	ThreadID string       `json:"threadId"`
	Target   ReviewTarget `json:"target"`
	// Delivery is "inline" or absent (Codex's "detached" is gone).
	Delivery *string `json:"delivery,omitzero"`
}

// ReviewTarget is what a review looks at: Type "uncommittedChanges",
// "baseBranch" (Branch), "commit" (Sha, Title) or "custom" (Instructions).
type ReviewTarget struct {
	Type         string  `json:"type"`
	Branch       string  `json:"branch,omitempty"`
	Sha          string  `json:"sha,omitempty"`
	Title        *string `json:"title,omitzero"`
	Instructions string  `json:"instructions,omitempty"`
}

// ReviewStartResponse is review/start's answer: the review turn, on the
// thread it was asked for.
type ReviewStartResponse struct {
	Turn           Turn   `json:"turn"`
	ReviewThreadID string `json:"reviewThreadId"`
}

// Method names and typed definitions of compaction and review.
const (
	MethodThreadCompactStart = "thread/compact/start"
	MethodReviewStart        = "review/start"
)

var (
	ThreadCompactStart = jsonrpc.Method[ThreadCompactStartParams, ThreadCompactStartResponse](MethodThreadCompactStart)
	ReviewStart        = jsonrpc.Method[ReviewStartParams, ReviewStartResponse](MethodReviewStart)
)
