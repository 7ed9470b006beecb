//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/codexd/codexd/appserver"
	"github.com/codexd/codexd/core/boot"
	"github.com/codexd/codexd/jsonrpc"
	"github.com/codexd/codexd/rpcserve"
)

// serveFlag makes this binary serve codexd's app-server on stdio, as
// `codexd app-server` does (boot.Open from $CODEX_HOME/config.toml, then
// appserver over rpcserve), with the packages of this working tree and a
// CPU (and heap) profile written at exit: -codexd-cpuprofile runs it in
// place of the codexd binary. It must stay a copy of cmd/codexd's
// app-server wiring, with nothing added but the profiles.
const serveFlag = "-serve-codexd"

func serveCodexd(args []string) int {
	fs := flag.NewFlagSet(serveFlag, flag.ExitOnError)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to `FILE`")
	memProfile := fs.String("memprofile", "", "write a heap profile to `FILE` at exit")
	fs.Parse(args)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	rt, err := boot.Open(ctx, boot.Options{Originator: "codexd_app_server", CliVersion: "0.169.0", Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "turnbench serve:", err)
		return 1
	}
	defer rt.Close()
	srv, err := appserver.New(appserver.Config{Core: rt.Core, MaxMessage: jsonrpc.DefaultMaxMessage, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "turnbench serve:", err)
		return 1
	}
	defer srv.Close()
	addr, _ := jsonrpc.ParseListenURL("stdio://")
	if err := rpcserve.Run(ctx, srv, addr, rpcserve.Options{MaxMessage: jsonrpc.DefaultMaxMessage}, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "turnbench serve:", err)
		return 1
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err == nil {
			runtime.GC()
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}
	return 0
}
