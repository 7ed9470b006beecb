package agent

// WebSearch is a search the model's provider made with its own web_search
// tool (a web_search_call output item): codexd runs nothing, it shows what
// was searched. Query is the action's short description, as Codex words it.
type WebSearch struct {
	ID     string
	Query  string
	Action *WebSearchAction // nil while the search runs
}

// WebSearchAction is what a search did. Type is "search" (Query, or
// Queries), "open_page" (URL), "find_in_page" (URL, Pattern) or "other".
type WebSearchAction struct {
	Type    string
	Query   string
	Queries []string
	URL     string
	Pattern string
}

func (i *WebSearch) ItemID() string { return i.ID }
func (*WebSearch) isItem()          {}
