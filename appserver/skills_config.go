package appserver

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/skills"
	"github.com/codexd/codexd/tomledit"
)

func registerSkillsConfigWrite(s *Server) {
	register(s, appproto.SkillsConfigWrite, s.skillsConfigWrite)
}

// skillRulesPath is the array of tables the rules live in.
var skillRulesPath = []string{"skills", "config"}

// skillRules reads the user's [[skills.config]] rules afresh, so that a
// write applies to the next skills/list.
func (s *Server) skillRules() []skills.Rule {
	if p := s.userConfigPath(); p != "" {
		return skills.ReadRules(p)
	}
	return nil
}

// skillsConfigWrite enables or disables a skill as Codex 0.169 does: a
// disable appends a [[skills.config]] entry {path or name, enabled =
// false} to the user's config.toml (unless one for the same selector is
// there); an enable removes the entries for that selector, so a rule of
// the other kind still applies. The path is written resolved, the name
// trimmed. The file keeps its comments and formatting and is replaced
// atomically, and only when it changes.
func (s *Server) skillsConfigWrite(ctx context.Context, c *call, p appproto.SkillsConfigWriteParams) (appproto.SkillsConfigWriteResponse, error) {
	var none appproto.SkillsConfigWriteResponse
	if p.Path != nil && !filepath.IsAbs(*p.Path) {
		return none, invalidRequest("Invalid request: AbsolutePathBuf deserialized without a base path")
	}
	var want skills.Rule
	switch {
	case p.Path != nil && p.Name == nil:
		want.Path = skills.NormalizePath(*p.Path)
	case p.Name != nil && p.Path == nil && strings.TrimSpace(*p.Name) != "":
		want.Name = strings.TrimSpace(*p.Name)
	default:
		return none, invalidParams("skills/config/write requires exactly one of path or name")
	}
	path := s.userConfigPath()
	if path == "" {
		return none, internalError("failed to update skill settings: no user config.toml")
	}
	failed := func(err error) error { return internalError("failed to update skill settings: " + err.Error()) }
	w := &s.cfgw // config/value/write's lock: one writer of config.toml at a time
	w.mu.Lock()
	defer w.mu.Unlock()
	src, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return none, failed(err)
	}
	cfg, err := decodeTOML(src)
	if err != nil {
		return none, failed(err)
	}
	doc, err := tomledit.Parse(src)
	if err != nil {
		return none, failed(err)
	}
	// The decoded entries, in file order, are the document's [[skills.config]]
	// sections; a file holding them otherwise (an inline array) is not edited.
	tbl, _ := cfg["skills"].(map[string]any)
	entries, _ := tbl["config"].([]map[string]any)
	if _, present := tbl["config"]; present && doc.ArrayTables(skillRulesPath) != len(entries) {
		return none, failed(errors.New("skills.config is not written as [[skills.config]] tables"))
	}
	selects := func(e map[string]any) bool {
		if want.Path != "" {
			p, ok := e["path"].(string)
			_, named := e["name"]
			return ok && !named && filepath.IsAbs(p) && skills.NormalizePath(p) == want.Path
		}
		n, ok := e["name"].(string)
		_, pathed := e["path"]
		return ok && !pathed && strings.TrimSpace(n) == want.Name
	}
	changed, kept := false, false
	for i := len(entries) - 1; i >= 0; i-- {
		if !selects(entries[i]) {
			continue
		}
		if on, _ := entries[i]["enabled"].(bool); !p.Enabled && !on && !kept {
			kept = true // already disabled: the entry stays where it is
			continue
		}
		if err := doc.DeleteArrayTable(skillRulesPath, i); err != nil {
			return none, failed(err)
		}
		changed = true
	}
	if !p.Enabled && !kept {
		m := &tomledit.Map{}
		if want.Path != "" {
			m.Set("path", want.Path)
		} else {
			m.Set("name", want.Name)
		}
		m.Set("enabled", false)
		if err := doc.AppendArrayTable(skillRulesPath, m); err != nil {
			return none, failed(err)
		}
		changed = true
	}
	if changed {
		if _, err := decodeTOML(doc.Bytes()); err != nil {
			return none, failed(err)
		}
		if err := writeAtomic(path, doc.Bytes()); err != nil {
			return none, failed(err)
		}
	}
	return appproto.SkillsConfigWriteResponse{EffectiveEnabled: p.Enabled}, nil
}
