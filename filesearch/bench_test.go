package filesearch

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
)

// benchEntries is a synthetic listing shaped like a large repository:
// 100,000 files in 5,000 directories.
func benchEntries() []entry {
	words := []string{"alpha", "beta", "gamma", "delta", "server", "client", "handler", "config", "parser", "lexer",
		"token", "model", "view", "store", "cache", "index", "query", "router", "session", "thread", "turn", "agent", "core", "util", "helper"}
	r := rand.New(rand.NewSource(7))
	var out []entry
	for a := 0; a < 100; a++ {
		for b := 0; b < 50; b++ {
			dir := fmt.Sprintf("%s%d/%s_%d", words[r.Intn(len(words))], a, words[r.Intn(len(words))], b)
			for c := 0; c < 20; c++ {
				out = append(out, newEntry(0, fmt.Sprintf("%s/%s%s%d.go", dir, words[r.Intn(len(words))], words[r.Intn(len(words))], c), false))
			}
		}
	}
	return out
}

// BenchmarkRank100k is one keystroke's matching in a warm session over a
// 100,000-file repository.
func BenchmarkRank100k(b *testing.B) {
	ents := benchEntries()
	for _, q := range []string{"s", "serv", "handlerC", "zz"} {
		b.Run(q, func(b *testing.B) {
			p := parsePattern(q)
			for i := 0; i < b.N; i++ {
				rank(context.Background(), p, []string{"/r"}, ents)
			}
		})
	}
}
