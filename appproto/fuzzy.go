package appproto

import "github.com/codexd/codexd/jsonrpc"

// The fuzzy file search methods (the TUI's @ mentions). The session
// methods are experimental in Codex 0.169.
const (
	MethodFuzzyFileSearch              = "fuzzyFileSearch"
	MethodFuzzyFileSearchSessionStart  = "fuzzyFileSearch/sessionStart"
	MethodFuzzyFileSearchSessionUpdate = "fuzzyFileSearch/sessionUpdate"
	MethodFuzzyFileSearchSessionStop   = "fuzzyFileSearch/sessionStop"
)

var (
	FuzzyFileSearch              = jsonrpc.Method[FuzzyFileSearchParams, FuzzyFileSearchResponse](MethodFuzzyFileSearch)
	FuzzyFileSearchSessionStart  = jsonrpc.Method[FuzzyFileSearchSessionStartParams, EmptyResponse](MethodFuzzyFileSearchSessionStart)
	FuzzyFileSearchSessionUpdate = jsonrpc.Method[FuzzyFileSearchSessionUpdateParams, EmptyResponse](MethodFuzzyFileSearchSessionUpdate)
	FuzzyFileSearchSessionStop   = jsonrpc.Method[FuzzyFileSearchSessionStopParams, EmptyResponse](MethodFuzzyFileSearchSessionStop)

	FuzzyFileSearchSessionUpdated   = jsonrpc.Notification[FuzzyFileSearchSessionUpdatedNotification]("fuzzyFileSearch/sessionUpdated")
	FuzzyFileSearchSessionCompleted = jsonrpc.Notification[FuzzyFileSearchSessionCompletedNotification]("fuzzyFileSearch/sessionCompleted")
)

// FuzzyFileSearchParams are the params of fuzzyFileSearch. A later search
// with the same cancellationToken cancels an earlier one still running.
type FuzzyFileSearchParams struct {
	Query             string   `json:"query"`
	Roots             []string `json:"roots"`
	CancellationToken *string  `json:"cancellationToken,omitzero"`
}

// FuzzyFileSearchResponse is the result of fuzzyFileSearch.
type FuzzyFileSearchResponse struct {
	Files []FuzzyFileSearchResult `json:"files"`
}

// FuzzyFileSearchResult is one match. The members are snake_case on the
// wire, as Codex 0.169 sends them.
type FuzzyFileSearchResult struct {
	Root      string   `json:"root"`
	Path      string   `json:"path"`
	MatchType string   `json:"match_type"` // "file" or "directory"
	FileName  string   `json:"file_name"`
	Score     uint32   `json:"score"`
	Indices   []uint32 `json:"indices"`
}

// FuzzyFileSearchSessionStartParams start (or replace) session SessionID.
type FuzzyFileSearchSessionStartParams struct {
	SessionID string   `json:"sessionId"`
	Roots     []string `json:"roots"`
}

// FuzzyFileSearchSessionUpdateParams set a session's query.
type FuzzyFileSearchSessionUpdateParams struct {
	SessionID string `json:"sessionId"`
	Query     string `json:"query"`
}

// FuzzyFileSearchSessionStopParams end a session.
type FuzzyFileSearchSessionStopParams struct {
	SessionID string `json:"sessionId"`
}

// FuzzyFileSearchSessionUpdatedNotification carries a session's matches
// for its query.
type FuzzyFileSearchSessionUpdatedNotification struct {
	SessionID string                  `json:"sessionId"`
	Query     string                  `json:"query"`
	Files     []FuzzyFileSearchResult `json:"files"`
}

// FuzzyFileSearchSessionCompletedNotification says a session's matches
// for its query are final.
type FuzzyFileSearchSessionCompletedNotification struct {
	SessionID string `json:"sessionId"`
}
