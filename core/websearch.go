package core

import (
	"encoding/json"
	"fmt"

	"github.com/codexd/codexd/agent"
)

// webSearchItem reads a web_search_call output item (raw, as the model's
// stream sent it) into the item the user sees. What does not parse is an
// action of type "other": the stream is untrusted, and a search it cannot
// describe is still shown.
func webSearchItem(id string, raw []byte) *agent.WebSearch {
	var w struct {
		Action *struct {
			Type    string   `json:"type"`
			Query   *string  `json:"query"`
			Queries []string `json:"queries"`
			URL     *string  `json:"url"`
			Pattern *string  `json:"pattern"`
		} `json:"action"`
	}
	it := &agent.WebSearch{ID: id, Action: &agent.WebSearchAction{Type: "other"}}
	if json.Unmarshal(raw, &w) != nil || w.Action == nil {
		return it
	}
	a := w.Action
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch a.Type {
	case "search", "open_page", "find_in_page":
		it.Action = &agent.WebSearchAction{Type: a.Type, Query: str(a.Query), Queries: a.Queries, URL: str(a.URL), Pattern: str(a.Pattern)}
	}
	it.Query = webSearchDetail(it.Action)
	return it
}

// webSearchDetail is the one line that says what a search did, as Codex
// 0.169 fills a webSearch item's query: the query (or the first of several,
// with " ..."), the page opened, or "'pattern' in url".
func webSearchDetail(a *agent.WebSearchAction) string {
	switch a.Type {
	case "search":
		if a.Query != "" {
			return a.Query
		}
		if len(a.Queries) == 0 {
			return ""
		}
		if len(a.Queries) > 1 && a.Queries[0] != "" {
			return a.Queries[0] + " ..."
		}
		return a.Queries[0]
	case "open_page":
		return a.URL
	case "find_in_page":
		switch {
		case a.Pattern != "" && a.URL != "":
			return fmt.Sprintf("'%s' in %s", a.Pattern, a.URL)
		case a.Pattern != "":
			return fmt.Sprintf("'%s'", a.Pattern)
		}
		return a.URL
	}
	return ""
}
