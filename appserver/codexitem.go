package appserver

import (
	"encoding/json"

	"github.com/codexd/codexd/agent"
)

// CodexHistoryItem is an item as Codex 0.169's history projection
// (thread_history_1.sqlite) keeps it: the app-server's item JSON, without
// its times (the projection keeps those in columns of their own), and its
// type. The store uses it to keep that projection up to date with what
// codexd appends (store.Options.CodexItem).
func CodexHistoryItem(it agent.Item) ([]byte, string, error) {
	b, err := json.Marshal(wireItem(it, nil))
	if err != nil {
		return nil, "", err
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, "", err
	}
	return b, head.Type, nil
}
