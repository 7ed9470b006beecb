package execpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is the rules directory inside CODEX_HOME; DefaultFile the file
// amendments go to, as in Codex.
const (
	Dir         = "rules"
	DefaultFile = "default.rules"
)

// Policy is the rules of one CODEX_HOME.
type Policy struct {
	Rules []Rule
}

// Load reads every *.rules file of home/rules, in name order; a missing
// directory is an empty policy.
func Load(home string) (*Policy, error) {
	dir := filepath.Join(home, Dir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &Policy{}, nil
	}
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".rules") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	p := &Policy{}
	for _, n := range names {
		path := filepath.Join(dir, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		rules, err := Parse(path, b)
		if err != nil {
			return nil, err
		}
		p.Rules = append(p.Rules, rules...)
	}
	return p, nil
}

// Check returns the most restrictive decision of the rules argv matches,
// and the rule that gave it; ok is false when none matches.
func (p *Policy) Check(argv []string) (d Decision, rule Rule, ok bool) {
	if p == nil {
		return "", Rule{}, false
	}
	for _, r := range p.Rules {
		if r.Matches(argv) && r.Decision.rank() > d.rank() {
			d, rule, ok = r.Decision, r, true
		}
	}
	return d, rule, ok
}

// FormatPrefixRule is Codex's canonical line for an amendment.
func FormatPrefixRule(prefix []string, d Decision) (string, error) {
	if len(prefix) == 0 {
		return "", errors.New("prefix rule requires at least one token")
	}
	toks := make([]string, len(prefix))
	for i, t := range prefix {
		b, err := json.Marshal(t)
		if err != nil {
			return "", err
		}
		toks[i] = string(b)
	}
	return fmt.Sprintf("prefix_rule(pattern=[%s], decision=%q)", strings.Join(toks, ", "), string(d)), nil
}

// AppendPrefixRule adds the amendment to home/rules/default.rules, as Codex
// does: the directory created if missing, the file locked, the line written
// once, after a newline if the file lacks one.
func AppendPrefixRule(home string, prefix []string, d Decision) error {
	line, err := FormatPrefixRule(prefix, d)
	if err != nil {
		return err
	}
	dir := filepath.Join(home, Dir)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, DefaultFile), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l == line {
			return nil
		}
	}
	out := line + "\n"
	if len(b) > 0 && b[len(b)-1] != '\n' {
		out = "\n" + out
	}
	_, err = f.WriteString(out)
	return err
}
