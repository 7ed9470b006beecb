package core

import (
	"fmt"
	"strings"
	"sync"

	"github.com/codexd/codexd/core/safety"
	"github.com/codexd/codexd/execpolicy"
)

// execRules is the command rules of CODEX_HOME ($CODEX_HOME/rules/*.rules,
// Codex's files): loaded once, at the first command a thread checks, and
// grown by the amendments users accept, which are also appended to
// rules/default.rules so that they hold in a new thread, after a restart
// and in Codex. Without a CODEX_HOME there are no rules.
type execRules struct {
	once   sync.Once
	mu     sync.Mutex
	policy *execpolicy.Policy
}

func (c *Core) loadRules() *execpolicy.Policy {
	r := &c.rules
	r.once.Do(func() {
		p := &execpolicy.Policy{}
		if home := c.cfg.CodexHome; home != "" {
			loaded, err := execpolicy.Load(home)
			if err != nil {
				// Codex refuses to start on a bad rules file; codexd goes on
				// with no rules (every command is judged as without them).
				c.log.Warn("command rules not loaded", "err", err)
			} else {
				p = loaded
			}
		}
		r.mu.Lock()
		r.policy = p
		r.mu.Unlock()
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	return &execpolicy.Policy{Rules: append([]execpolicy.Rule(nil), r.policy.Rules...)}
}

// ruleVerdict is what the rules say of one exec_command.
type ruleVerdict struct {
	// forbidden is Codex's rejection reason when a rule forbids a command.
	forbidden string
	// prompt is Codex's approval reason when a rule asks for approval.
	prompt string
	// allowed: every command of the script matched an allow rule, so it
	// runs without asking and outside the sandbox, as in Codex.
	allowed bool
	// matched: some command of the script matched a rule.
	matched bool
}

// checkRules judges argv (shown as command) by the rules, each plain
// command of a shell script on its own and the most restrictive winning;
// a script that is not plain is one command, its whole argv, as Codex
// splits it.
func (c *Core) checkRules(argv []string, command string) ruleVerdict {
	p := c.loadRules()
	if len(p.Rules) == 0 {
		return ruleVerdict{}
	}
	cmds, complex := safety.Commands(argv)
	if complex || len(cmds) == 0 {
		cmds = [][]string{argv}
	}
	var v ruleVerdict
	allMatched := true
	for _, cmd := range cmds {
		d, rule, ok := p.Check(cmd)
		if !ok {
			allMatched = false
			continue
		}
		v.matched = true
		switch d {
		case execpolicy.Forbidden:
			if v.forbidden == "" {
				why := rule.Justification
				if why == "" {
					why = fmt.Sprintf("policy forbids commands starting with `%s`", strings.Join(cmd[:min(len(rule.Pattern), len(cmd))], " "))
				}
				v.forbidden = fmt.Sprintf("`%s` rejected: %s", command, why)
			}
		case execpolicy.Prompt:
			allMatched = false
			v.prompt = fmt.Sprintf("`%s` requires approval by policy", command)
		}
	}
	v.allowed = allMatched && v.forbidden == "" && v.prompt == ""
	return v
}

// acceptAmendment keeps an accepted amendment: in this core's rules, and
// in rules/default.rules, where Codex keeps it.
func (c *Core) acceptAmendment(prefix []string) {
	c.loadRules()
	rule := execpolicy.Rule{Pattern: make([][]string, len(prefix)), Decision: execpolicy.Allow}
	for i, tok := range prefix {
		rule.Pattern[i] = []string{tok}
	}
	c.rules.mu.Lock()
	c.rules.policy.Rules = append(c.rules.policy.Rules, rule)
	c.rules.mu.Unlock()
	if home := c.cfg.CodexHome; home != "" {
		if err := execpolicy.AppendPrefixRule(home, prefix, execpolicy.Allow); err != nil {
			c.log.Warn("amendment not saved to the rules file", "err", err, "prefix", prefix)
		}
	}
}
