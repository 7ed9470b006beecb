package execenv

import (
	"maps"
	"strings"
	"testing"
)

var environ = []string{
	"PATH=/usr/bin", "HOME=/home/u", "path_lower=x", "Lang=C", "FOO=bar", "API_KEY=k", "my_secret_thing=s",
	"GH_TOKEN=t", "KEYBOARD=us", "CORP_PASSWORD=pw", "NODE_REPL_AUTH_TOKEN=n", "noequals", "=empty", "FOO=bar2",
}

func TestBuildRules(t *testing.T) {
	cases := []struct {
		name    string
		p       Policy
		secrets []string
		want    map[string]string
	}{
		{"all with the default excludes", Policy{}, nil, map[string]string{
			"PATH": "/usr/bin", "HOME": "/home/u", "path_lower": "x", "Lang": "C", "FOO": "bar2", "CORP_PASSWORD": "pw"}},
		{"all, excludes ignored (the launch context still goes)", Policy{Inherit: InheritAll, IgnoreDefaultExcludes: true}, nil, map[string]string{
			"PATH": "/usr/bin", "HOME": "/home/u", "path_lower": "x", "Lang": "C", "FOO": "bar2", "API_KEY": "k",
			"my_secret_thing": "s", "GH_TOKEN": "t", "KEYBOARD": "us", "CORP_PASSWORD": "pw"}},
		{"core, names ignoring case", Policy{Inherit: InheritCore, IgnoreDefaultExcludes: true}, nil, map[string]string{
			"PATH": "/usr/bin", "HOME": "/home/u", "Lang": "C"}},
		{"none", Policy{Inherit: InheritNone}, nil, map[string]string{}},
		{"exclude globs, ignoring case", Policy{Exclude: []string{"foo", "p?th*"}}, nil, map[string]string{
			"HOME": "/home/u", "Lang": "C", "CORP_PASSWORD": "pw"}},
		{"set after the excludes", Policy{Exclude: []string{"FOO"}, Set: map[string]string{"FOO": "set", "API_KEY": "mine"}}, nil, map[string]string{
			"PATH": "/usr/bin", "HOME": "/home/u", "path_lower": "x", "Lang": "C", "FOO": "set", "API_KEY": "mine", "CORP_PASSWORD": "pw"}},
		{"include_only last, over set too", Policy{Inherit: InheritNone, Set: map[string]string{"A": "1", "B": "2"}, IncludeOnly: []string{"a"}}, nil, map[string]string{
			"A": "1"}},
		{"include_only after the excludes", Policy{IncludeOnly: []string{"*PATH*", "API_KEY"}}, nil, map[string]string{
			"PATH": "/usr/bin", "path_lower": "x"}},
		{"secrets go whatever the policy says", Policy{Inherit: InheritAll, IgnoreDefaultExcludes: true, Set: map[string]string{"corp_password": "set"}, IncludeOnly: []string{"CORP_*", "PATH"}},
			[]string{"CORP_PASSWORD"}, map[string]string{"PATH": "/usr/bin"}},
		{"the launch context cannot be set", Policy{Set: map[string]string{"OPENAI_IDENTITY_TOKEN_FILE": "/x"}, IncludeOnly: []string{"OPENAI_*"}}, nil, map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Build(environ, c.p, c.secrets); !maps.Equal(got, c.want) {
				t.Fatalf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		p, n string
		want bool
	}{
		{"*KEY*", "OPENAI_API_KEY", true}, {"*KEY*", "key", true}, {"*KEY*", "KY", false},
		{"PATH", "path", true}, {"PATH", "PATHS", false}, {"P?TH", "PATH", true}, {"P?TH", "PTH", false},
		{"*", "", true}, {"", "", true}, {"", "A", false}, {"a*b*c", "aXXbYYc", true}, {"a*b*c", "aXXbYY", false},
		{"**", "x", true}, {"*b", "bab", true}, {"*a", "abb", false}, {"É*", "éte", true},
	} {
		if got := Match(c.p, c.n); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.p, c.n, got)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, in := range []Inherit{"", "all", "core", "none"} {
		if err := (Policy{Inherit: in}).Validate(); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
	if err := (Policy{Inherit: "some"}).Validate(); err == nil {
		t.Error("inherit \"some\" accepted")
	}
}

// FuzzMatch: Match never panics, and agrees with a plain recursive matcher.
// Seeds: testdata/fuzz/FuzzMatch.
func FuzzMatch(f *testing.F) {
	f.Add("*KEY*", "OPENAI_API_KEY")
	f.Add("a*?b", "aXb")
	f.Fuzz(func(t *testing.T, p, n string) {
		if len(p) > 12 || len(n) > 24 {
			return // keep the reference matcher cheap
		}
		if got, want := Match(p, n), refMatch([]rune(strings.ToLower(p)), []rune(strings.ToLower(n))); got != want {
			t.Fatalf("Match(%q, %q) = %v, want %v", p, n, got, want)
		}
	})
}

func refMatch(p, n []rune) bool {
	if len(p) == 0 {
		return len(n) == 0
	}
	switch p[0] {
	case '*':
		return refMatch(p[1:], n) || len(n) > 0 && refMatch(p, n[1:])
	case '?':
		return len(n) > 0 && refMatch(p[1:], n[1:])
	}
	return len(n) > 0 && p[0] == n[0] && refMatch(p[1:], n[1:])
}
