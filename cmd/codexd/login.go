//go:build !execonly

package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/codexd/codexd/auth"
	"github.com/codexd/codexd/config"
)

// runLogin is `codexd login`: `--with-api-key` (the key on stdin) or
// `status`, as `codex login`; package auth does the work.
func runLogin(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	withKey := fs.Bool("with-api-key", false, "read an OpenAI API key from stdin and save it in $CODEX_HOME/auth.json")
	var overrides multiFlag
	fs.Var(&overrides, "c", "accepted for compatibility with codex login")
	fs.Usage = flagUsage(fs, "usage: codexd login --with-api-key < key.txt\n       codexd login status")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	home, err := config.Home(nil)
	if err != nil {
		fmt.Fprintln(stderr, "codexd login:", err)
		return 1
	}
	switch {
	case fs.NArg() == 1 && fs.Arg(0) == "status" && !*withKey:
		return auth.Status(home, stdout, stderr)
	case fs.NArg() == 0 && *withKey:
		return auth.LoginWithAPIKey(home, stdin, stdout, stderr)
	case fs.NArg() == 0:
		fmt.Fprintln(stderr, "codexd login: codexd has no ChatGPT sign-in flow (no browser); sign in with `codex login`, whose auth.json codexd uses, or save an API key with `codexd login --with-api-key`")
		return 2
	}
	fmt.Fprintf(stderr, "codexd login: unexpected argument %q\n", fs.Arg(0))
	fs.Usage()
	return 2
}

// runLogout is `codexd logout`: removes $CODEX_HOME/auth.json.
func runLogout(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("logout", flag.ContinueOnError)
	fs.Usage = flagUsage(fs, "usage: codexd logout")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codexd logout: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	home, err := config.Home(nil)
	if err != nil {
		fmt.Fprintln(stderr, "codexd logout:", err)
		return 1
	}
	return auth.Logout(home, stdout, stderr)
}
