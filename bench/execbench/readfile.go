package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codexd/codexd/internal/procstat"
)

// readFilePeak measures the peak RSS of codexd while it answers one
// fs/readFile of a file of mib MiB (codexd only: Codex is never sent an
// fs method). The file is written in a fresh temporary directory and
// removed after.
func readFilePeak(o options, mib int64) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "execbench-readfile-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "big")
	f, err := os.Create(path)
	if err != nil {
		fatalf("%v", err)
	}
	block := []byte(strings.Repeat("0123456789abcdef", 1<<16)) // 1 MiB
	for range mib {
		if _, err := f.Write(block); err != nil {
			fatalf("%v", err)
		}
	}
	f.Close()
	size := mib << 20

	srv, err := startServer(ctx, "codexd", []string{o.codexd, "exec-server", "--listen", "ws://127.0.0.1:0"})
	if err != nil {
		fatalf("%v", err)
	}
	defer srv.stop()
	pid := srv.pid()
	c, err := dial(ctx, srv.url, true)
	if err != nil {
		fatalf("dial: %v", err)
	}
	defer c.close()
	base := procstat.RSSKB(pid)
	resetPeak(pid)
	t0 := time.Now()
	res, err := c.call(ctx, "fs/readFile", map[string]any{"path": "file://" + path})
	if err != nil {
		fatalf("fs/readFile: %v", err)
	}
	wall := time.Since(t0)
	peak, _ := procstat.StatusKB(pid, "VmHWM")
	var r struct {
		DataBase64 string `json:"dataBase64"`
	}
	if err := json.Unmarshal(res, &r); err != nil || int64(len(r.DataBase64)) != (size+2)/3*4 {
		fatalf("fs/readFile returned %d base64 bytes (%v), want %d", len(r.DataBase64), err, (size+2)/3*4)
	}
	fmt.Printf("fs/readFile of %d MiB: %.2f s; server RSS %d MiB before, peak %d MiB = %.2f× the file (%.2f× above the idle RSS)\n",
		mib, wall.Seconds(), base>>10, peak>>10, float64(peak<<10)/float64(size), float64((peak-base)<<10)/float64(size))
	return 0
}
