package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// ProfileFileName is Codex 0.169's profile file in CODEX_HOME:
// `--profile NAME` (or `profile = "NAME"`) layers NAME.config.toml over
// config.toml. The older [profiles.NAME] table is read when there is no
// such file.
func ProfileFileName(name string) string { return name + ".config.toml" }

// ProjectConfigPath is a project's own config, layered for a trusted
// project ([projects."PATH"] trust_level = "trusted").
const ProjectConfigPath = ".codex/config.toml"

// layers merges the profile file and a trusted project's .codex/config.toml
// files over config.toml's content, as Codex stacks its layers (user,
// profile, project from its root down to cwd; -c overrides and flags stay
// on top). It returns the content to parse, and whether the profile was a
// file (then no [profiles.NAME] table is looked for).
func layers(home string, data []byte, opts LoadOptions) ([]byte, bool, error) {
	base := map[string]any{}
	if _, err := toml.Decode(string(data), &base); err != nil {
		return data, false, nil // Parse reports it, with its line
	}
	merged := false
	profile := profileName(base, opts)
	profileFile := false
	if profile != "" && filepath.Base(profile) == profile && profile != "." && profile != ".." {
		layer, ok, err := readLayer(filepath.Join(home, ProfileFileName(profile)))
		if err != nil {
			return nil, false, err
		}
		if ok {
			mergeTree(base, layer)
			merged, profileFile = true, true
		}
	}
	if opts.Cwd != "" {
		for _, p := range projectLayers(base, opts.Cwd) {
			layer, ok, err := readLayer(p)
			if err != nil {
				return nil, false, err
			}
			if ok {
				delete(layer, "projects") // a project cannot trust itself
				mergeTree(base, layer)
				merged = true
			}
		}
	}
	if !merged {
		return data, false, nil
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(base); err != nil {
		return nil, false, fmt.Errorf("merging the config layers: %w", err)
	}
	return buf.Bytes(), profileFile, nil
}

// profileName is the profile selected: the option, a -c profile=...
// override, else the file's profile key.
func profileName(base map[string]any, opts LoadOptions) string {
	if opts.Profile != "" {
		return opts.Profile
	}
	name, _ := base["profile"].(string)
	for _, o := range opts.Overrides {
		if ov, err := ParseOverride(o); err == nil && len(ov.Path) == 1 && ov.Path[0] == "profile" {
			if s, ok := ov.Value.(string); ok {
				name = s
			}
		}
	}
	return name
}

func readLayer(path string) (map[string]any, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	layer := map[string]any{}
	if _, err := toml.Decode(string(data), &layer); err != nil {
		return nil, false, asError(path, err)
	}
	return layer, true, nil
}

// mergeTree sets on dst what src sets; tables merge key by key.
func mergeTree(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				mergeTree(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// projectLayers are the .codex/config.toml paths of cwd's project, from
// its root (the nearest ancestor holding one of project_root_markers,
// default .git) down to cwd, when the root or cwd is trusted; none else.
func projectLayers(base map[string]any, cwd string) []string {
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil
	}
	markers := []string{".git"}
	if ms, ok := base["project_root_markers"].([]any); ok {
		markers = markers[:0]
		for _, m := range ms {
			if s, ok := m.(string); ok {
				markers = append(markers, s)
			}
		}
	}
	root := cwd
	for dir := cwd; ; dir = filepath.Dir(dir) {
		found := false
		for _, m := range markers {
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				found = true
			}
		}
		if found {
			root = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if !trusted(base, root) && !trusted(base, cwd) {
		return nil
	}
	var dirs []string
	for dir := cwd; ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == root || filepath.Dir(dir) == dir {
			break
		}
	}
	paths := make([]string, 0, len(dirs))
	for i := len(dirs) - 1; i >= 0; i-- {
		paths = append(paths, filepath.Join(dirs[i], ProjectConfigPath))
	}
	return paths
}

func trusted(base map[string]any, dir string) bool {
	projects, _ := base["projects"].(map[string]any)
	p, _ := projects[dir].(map[string]any)
	level, _ := p["trust_level"].(string)
	return level == "trusted"
}
