package appproto

import "github.com/codexd/codexd/jsonrpc"

// MethodSkillsConfigWrite is skills/config/write: enable or disable a
// skill in the user's config.toml ([[skills.config]]).
const MethodSkillsConfigWrite = "skills/config/write"

// SkillsConfigWrite is its typed definition.
var SkillsConfigWrite = jsonrpc.Method[SkillsConfigWriteParams, SkillsConfigWriteResponse](MethodSkillsConfigWrite)

// SkillsConfigWriteParams select a skill by the path of its SKILL.md or
// by name (exactly one of the two).
type SkillsConfigWriteParams struct {
	Enabled bool    `json:"enabled"`
	Name    *string `json:"name,omitzero"`
	Path    *string `json:"path,omitzero"`
}

// SkillsConfigWriteResponse says whether the skill is now enabled, as
// the write asked.
type SkillsConfigWriteResponse struct {
	EffectiveEnabled bool `json:"effectiveEnabled"`
}
