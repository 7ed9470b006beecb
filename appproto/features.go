package appproto

import "github.com/codexd/codexd/jsonrpc"

// Method names of the experimental features' list and switch (the TUI's
// /experimental).
const (
	MethodExperimentalFeatureList          = "experimentalFeature/list"
	MethodExperimentalFeatureEnablementSet = "experimentalFeature/enablement/set"
)

// Their typed definitions.
var (
	ExperimentalFeatureList          = jsonrpc.Method[ExperimentalFeatureListParams, ExperimentalFeatureListResponse](MethodExperimentalFeatureList)
	ExperimentalFeatureEnablementSet = jsonrpc.Method[ExperimentalFeatureEnablementSetParams, ExperimentalFeatureEnablementSetResponse](MethodExperimentalFeatureEnablementSet)
)

// ExperimentalFeatureListParams page through the feature flags; ThreadID,
// when set, must name a loaded thread.
type ExperimentalFeatureListParams struct {
	Cursor   *string `json:"cursor,omitzero"`
	Limit    *uint32 `json:"limit,omitzero"`
	ThreadID *string `json:"threadId,omitzero"`
}

// ExperimentalFeatureListResponse is one page of feature flags.
type ExperimentalFeatureListResponse struct {
	Data       []ExperimentalFeature `json:"data"`
	NextCursor *string               `json:"nextCursor"`
}

// ExperimentalFeature is one [features] flag: its config.toml name, its
// stage ("beta", "underDevelopment", "stable", "deprecated", "removed")
// and whether it is on. DisplayName, Description and Announcement are
// null outside the beta stage.
type ExperimentalFeature struct {
	Name           string  `json:"name"`
	Stage          string  `json:"stage"`
	DisplayName    *string `json:"displayName"`
	Description    *string `json:"description"`
	Announcement   *string `json:"announcement"`
	Enabled        bool    `json:"enabled"`
	DefaultEnabled bool    `json:"defaultEnabled"`
}

// ExperimentalFeatureEnablementSetParams switch features at run time.
type ExperimentalFeatureEnablementSetParams struct {
	Enablement map[string]bool `json:"enablement"`
}

// ExperimentalFeatureEnablementSetResponse lists the entries it changed.
type ExperimentalFeatureEnablementSetResponse struct {
	Enablement map[string]bool `json:"enablement"`
}
