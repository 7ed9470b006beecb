// Command searchbench measures the TUI's @-mention search side by side:
// Codex 0.169's app-server and codexd's, each over stdio, on the same
// generated tree of 100,000 files. It times the walk (sessionStart to the
// first sessionCompleted), each keystroke of a warm session (sessionUpdate
// to the sessionUpdated of that query) and one-shot fuzzyFileSearch.
//
// It only reads the tree it generates (under -tree, created if missing).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	codex := flag.String("codex", "", "the codex binary (Codex 0.169)")
	codexd := flag.String("codexd", "", "the codexd binary")
	tree := flag.String("tree", "", "the tree to search (made with -files files if missing)")
	files := flag.Int("files", 100000, "files in a generated tree")
	reps := flag.Int("reps", 3, "passes over the queries")
	runs := flag.Int("runs", 1, "runs of both servers, in alternating order; more than one adds a line of medians and ratios")
	flag.Parse()
	if *codex == "" || *codexd == "" || *tree == "" {
		log.Fatal("usage: searchbench -codex BIN -codexd BIN -tree DIR")
	}
	if err := ensureTree(*tree, *files); err != nil {
		log.Fatal(err)
	}
	sides := []struct{ name, bin string }{{"codex", *codex}, {"codexd", *codexd}}
	all := map[string][]result{}
	for i := 0; i < *runs; i++ {
		// Alternating which server goes first keeps a machine's passing
		// load from always landing on the same one.
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, k := range order {
			side := sides[k]
			r, err := run(side.bin, *tree, *reps)
			if err != nil {
				log.Fatalf("%s: %v", side.name, err)
			}
			all[side.name] = append(all[side.name], r)
			fmt.Printf("%-7s walk %6.0f ms  keystroke p50 %6.1f p90 %6.1f max %6.1f ms  one-shot p50 %6.1f ms\n",
				side.name, r.walk, r.p50, r.p90, r.max, r.oneShot)
		}
	}
	if *runs > 1 {
		a, b := medians(all["codex"]), medians(all["codexd"])
		fmt.Printf("medians of %d runs, codex / codexd (ratio codexd/codex): walk %.0f / %.0f ms (%.2f), keystroke p50 %.1f / %.1f (%.2f), p90 %.1f / %.1f (%.2f), max %.1f / %.1f (%.2f), one-shot %.1f / %.1f ms (%.2f)\n",
			*runs, a.walk, b.walk, b.walk/a.walk, a.p50, b.p50, b.p50/a.p50, a.p90, b.p90, b.p90/a.p90, a.max, b.max, b.max/a.max, a.oneShot, b.oneShot, b.oneShot/a.oneShot)
	}
}

// medians is each figure's median over rs.
func medians(rs []result) result {
	med := func(f func(result) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		sort.Float64s(xs)
		return xs[len(xs)/2]
	}
	return result{walk: med(func(r result) float64 { return r.walk }), p50: med(func(r result) float64 { return r.p50 }),
		p90: med(func(r result) float64 { return r.p90 }), max: med(func(r result) float64 { return r.max }),
		oneShot: med(func(r result) float64 { return r.oneShot })}
}

var words = strings.Fields("alpha beta gamma delta server client handler config parser lexer token model view store cache index query router session thread turn agent core util helper")

// ensureTree writes n empty files in 100×50 directories, deterministically.
func ensureTree(root string, n int) error {
	if _, err := os.Stat(root); err == nil {
		return nil
	}
	r := rand.New(rand.NewSource(7))
	perDir := max(n/5000, 1)
	for a := 0; a < 100; a++ {
		for b := 0; b < 50; b++ {
			dir := filepath.Join(root, fmt.Sprintf("%s%d", words[r.Intn(len(words))], a), fmt.Sprintf("%s_%d", words[r.Intn(len(words))], b))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for c := 0; c < perDir; c++ {
				w := words[r.Intn(len(words))]
				name := fmt.Sprintf("%s%s%s%d.go", words[r.Intn(len(words))], strings.ToUpper(w[:1]), w[1:], c)
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// queries are what a user types, growing a few of them a key at a time.
var queries = []string{"s", "se", "ser", "serv", "server", "serverh", "serverha", "hand", "handlerC", "cfg", "tok12", "qry", "sess", "agent", "core_3", "util", "zz", "alpha9"}

type result struct{ walk, p50, p90, max, oneShot float64 }

type peer struct {
	in  io.Writer
	out *bufio.Reader
}

func (p *peer) send(v any) error {
	b, _ := json.Marshal(v)
	_, err := p.in.Write(append(b, '\n'))
	return err
}

// until reads messages until match takes one.
func (p *peer) until(match func(map[string]any) bool) error {
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			return err
		}
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && match(m) {
			return nil
		}
	}
}

func run(bin, tree string, reps int) (result, error) {
	home, err := os.MkdirTemp("", "searchbench-home")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(home)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("model = \"m\"\n"), 0o600); err != nil {
		return result{}, err
	}
	cmd := exec.Command(bin, "app-server")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	p := &peer{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	id := func(n float64) func(map[string]any) bool {
		return func(m map[string]any) bool { v, ok := m["id"].(float64); return ok && v == n && m["method"] == nil }
	}
	method := func(name, query string) func(map[string]any) bool {
		return func(m map[string]any) bool {
			if m["method"] != name {
				return false
			}
			if query == "\x00" {
				return true
			}
			pm, _ := m["params"].(map[string]any)
			return pm["query"] == query
		}
	}
	_ = p.send(map[string]any{"id": 0, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "searchbench", "version": "1"}, "capabilities": map[string]any{"experimentalApi": true}}})
	if err := p.until(id(0)); err != nil {
		return result{}, err
	}
	_ = p.send(map[string]any{"method": "initialized"})
	var r result
	start := time.Now()
	_ = p.send(map[string]any{"id": 1, "method": "fuzzyFileSearch/sessionStart", "params": map[string]any{"sessionId": "s", "roots": []string{tree}}})
	if err := p.until(method("fuzzyFileSearch/sessionCompleted", "\x00")); err != nil {
		return r, err
	}
	r.walk = ms(time.Since(start))
	var lat []float64
	n := 2.0
	for rep := 0; rep < reps; rep++ {
		for _, q := range queries {
			t := time.Now()
			_ = p.send(map[string]any{"id": n, "method": "fuzzyFileSearch/sessionUpdate", "params": map[string]any{"sessionId": "s", "query": q}})
			n++
			if err := p.until(method("fuzzyFileSearch/sessionUpdated", q)); err != nil {
				return r, err
			}
			lat = append(lat, ms(time.Since(t)))
		}
	}
	var one []float64
	for _, q := range queries[:6] {
		t := time.Now()
		_ = p.send(map[string]any{"id": n, "method": "fuzzyFileSearch", "params": map[string]any{"query": q, "roots": []string{tree}}})
		if err := p.until(id(n)); err != nil {
			return r, err
		}
		n++
		one = append(one, ms(time.Since(t)))
	}
	sort.Float64s(lat)
	sort.Float64s(one)
	r.p50, r.p90, r.max = lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1]
	r.oneShot = one[len(one)/2]
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
