// Command rpcbench runs every workload for every JSON-RPC implementation in
// one process and prints markdown tables of absolute figures and ratios.
//
//	go run ./cmd/rpcbench                  # full run, about 2-3 minutes on 2 cores
//	go run ./cmd/rpcbench -d 200ms -runs 1 # quick look
//	go run ./cmd/rpcbench -impl codexd,floor -workload echo -cpuprofile cpu.out
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/codexd/codexd/bench/harness"
)

func main() {
	d := flag.Duration("d", 300*time.Millisecond, "duration of one measured run")
	runs := flag.Int("runs", 5, "measured runs per cell (the median is reported)")
	implF := flag.String("impl", "", "comma-separated substrings of implementation names to run (default all)")
	workF := flag.String("workload", "", "comma-separated substrings of workload names to run (default all)")
	transF := flag.String("transport", "", "pipe or tcp (default both)")
	hostile := flag.Bool("hostile", true, "run the hostile-input measurements")
	throughput := flag.Bool("throughput", true, "run the throughput workloads")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the throughput workloads to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile to this file at the end")
	mutexprofile := flag.String("mutexprofile", "", "write a mutex contention profile to this file at the end")
	flag.Parse()

	var impls []harness.Impl
	for _, i := range harness.All() {
		if match(i.Name, *implF) {
			impls = append(impls, i)
		}
	}
	var trans []harness.Transport
	for _, t := range harness.Transports() {
		if match(t.Name, *transF) {
			trans = append(trans, t)
		}
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 4096
	}
	if *mutexprofile != "" {
		runtime.SetMutexProfileFraction(5)
	}
	v, _ := goVersion()
	fmt.Printf("rpcbench: %s, %s, GOMAXPROCS=%d, NumCPU=%d, %s/%s; %d runs of %v per cell (median)\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), v, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, *runs, *d)

	var ms []harness.Measure
	if *throughput {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				log.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				log.Fatal(err)
			}
		}
		for _, w := range harness.Workloads() {
			if !match(w.Name, *workF) {
				continue
			}
			for _, t := range trans {
				for _, m := range harness.RunCell(impls, t, w, *d, *runs) {
					fmt.Fprintf(os.Stderr, "%-18s %-5s %-22s %10.0f %s/s %7.1f allocs %v\n", w.Name, t.Name, m.Impl, m.Rate, w.Unit, m.Allocs, errStr(m.Err))
					ms = append(ms, m)
				}
			}
		}
		if *cpuprofile != "" {
			pprof.StopCPUProfile()
		}
		fmt.Println("## Throughput")
		fmt.Println()
		fmt.Println("ops/s is calls/s (notifications: notifications handled per second at the receiver); allocs/op and B/op count client and server together.")
		fmt.Println()
		harness.WriteTable(os.Stdout, ms)
		fmt.Println()
	}

	var hs []harness.HostileResult
	if *hostile {
		for _, p := range harness.Payloads() {
			if !match(p.Name, *workF) && *workF != "" && !match("hostile", *workF) {
				continue
			}
			for _, t := range trans {
				for _, i := range impls {
					r := harness.RunHostile(i, t, p)
					fmt.Fprintf(os.Stderr, "%-18s %-5s %-22s peak %8d alloc %10d %s %v\n", p.Name, t.Name, i.Name, r.PeakHeap, r.Alloc, r.Outcome, errStr(r.Err))
					hs = append(hs, r)
				}
			}
		}
		fmt.Println("## Hostile input (one message each)")
		fmt.Println()
		harness.WriteHostile(os.Stdout, hs)
		fmt.Println()
	}

	fmt.Println("## Goals (codexd, bounded decoder on)")
	fmt.Println()
	harness.WriteGoals(os.Stdout, ms, hs)

	if *memprofile != "" {
		runtime.GC() // the profile covers allocations up to the last GC
		writeProfile("allocs", *memprofile)
	}
	if *mutexprofile != "" {
		writeProfile("mutex", *mutexprofile)
	}
}

func writeProfile(name, path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func match(name, filter string) bool {
	if filter == "" {
		return true
	}
	for _, f := range strings.Split(filter, ",") {
		if f != "" && strings.Contains(strings.ToLower(name), strings.ToLower(strings.TrimSpace(f))) {
			return true
		}
	}
	return false
}

func errStr(err error) string {
	if err == nil {
		return ""
	}
	return "ERR " + err.Error()
}

func goVersion() (string, error) { return runtime.Version(), nil }
