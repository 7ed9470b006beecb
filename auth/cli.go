package auth

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxKeyBytes bounds the API key read from stdin.
const maxKeyBytes = 64 << 10

// LoginWithAPIKey reads an API key from stdin (its first line, trimmed)
// and saves it as `codex login --with-api-key` does; the key is never
// echoed. It returns the process exit code.
func LoginWithAPIKey(home string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "Reading API key from stdin...")
	r := bufio.NewReader(io.LimitReader(stdin, maxKeyBytes+1))
	line, err := r.ReadString('\n')
	if err != nil && err != io.EOF {
		fmt.Fprintln(stderr, "Failed to read the API key from stdin:", err)
		return 1
	}
	if len(line) > maxKeyBytes {
		fmt.Fprintln(stderr, "The API key on stdin is too long.")
		return 1
	}
	key := strings.TrimSpace(line)
	if key == "" {
		fmt.Fprintln(stderr, "No API key provided via stdin.")
		return 1
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		fmt.Fprintln(stderr, "Error saving the API key:", err)
		return 1
	}
	if err := SaveAPIKey(home, key); err != nil {
		fmt.Fprintln(stderr, "Error saving the API key:", err)
		return 1
	}
	fmt.Fprintln(stderr, "API key saved. Authentication is checked when you send a request.")
	return 0
}

// Status prints how home's auth.json signs in, as `codex login status`
// does (exit 0 when signed in, 1 when not), without any of the key or
// tokens: Codex prints a long key's first and last characters, codexd
// masks it whole, as Codex masks a short one.
func Status(home string, stdout, stderr io.Writer) int {
	a, err := NewManager(home, Options{}).Account()
	if err != nil {
		if err == ErrNotSignedIn {
			fmt.Fprintln(stderr, "Not logged in")
		} else {
			fmt.Fprintln(stderr, "Error checking login status:", err)
		}
		return 1
	}
	switch a.Mode {
	case ModeAPIKey:
		fmt.Fprintln(stderr, "API key configured - ***")
		fmt.Fprintln(stderr, "Authentication is checked when you send a request.")
	default:
		fmt.Fprintln(stderr, "Logged in using ChatGPT")
	}
	return 0
}

// Logout removes home's auth.json, as `codex logout` does.
func Logout(home string, stdout, stderr io.Writer) int {
	removed, err := Remove(home)
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "Error logging out:", err)
		return 1
	case removed:
		fmt.Fprintln(stderr, "Successfully logged out")
	default:
		fmt.Fprintln(stderr, "Not logged in")
	}
	return 0
}
