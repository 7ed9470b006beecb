// Command pingpong measures the floor under any JSON-RPC engine on this
// machine: a 58-byte message bounced over loopback TCP (and net.Pipe), with
// no encoding at all, in two shapes:
//
//   - direct: the caller writes and then reads the answer itself, in one
//     goroutine, as a client with no reader of its own can;
//   - reader: a reader goroutine receives the answer and hands it to the
//     caller over a channel, as every bidirectional peer must, since the
//     other side may send a request or a notification at any time.
//
// The difference between the two is the cost of one goroutine hand-off,
// which no engine with a reader goroutine avoids. Compare the calls per
// second with rpcbench's "echo (small)" row measured in the same minute.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"time"
)

var msg = []byte(`{"id":1,"method":"echo","params":{"text":"hello","n":42}}` + "\n")

func main() {
	d := flag.Duration("d", 500*time.Millisecond, "length of one measured run")
	runs := flag.Int("runs", 5, "runs per cell; the median is reported")
	flag.Parse()
	fmt.Println("| transport | shape | round trips/s | µs per round trip |")
	fmt.Println("|---|---|---:|---:|")
	for _, tr := range []string{"pipe", "tcp"} {
		for _, shape := range []string{"direct", "reader"} {
			var rates []float64
			for range *runs {
				r, err := measure(tr, shape == "reader", *d)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				rates = append(rates, r)
			}
			sort.Float64s(rates)
			med := rates[len(rates)/2]
			fmt.Printf("| %s | %s | %.0f | %.1f |\n", tr, shape, med, 1e6/med)
		}
	}
}

func pair(transport string) (client, server net.Conn, err error) {
	if transport == "pipe" {
		a, b := net.Pipe()
		return a, b, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	server = <-accepted
	if server == nil {
		client.Close()
		return nil, nil, fmt.Errorf("accept failed")
	}
	return client, server, nil
}

// measure bounces msg for d and returns round trips per second.
func measure(transport string, viaReader bool, d time.Duration) (float64, error) {
	client, server, err := pair(transport)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	defer server.Close()
	// The server echoes whatever arrives, from one goroutine.
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := server.Read(buf)
			if err != nil {
				return
			}
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	answers := make(chan error, 1)
	if viaReader {
		go func() {
			buf := make([]byte, len(msg))
			for {
				_, err := io.ReadFull(client, buf)
				answers <- err
				if err != nil {
					return
				}
			}
		}()
	}
	buf := make([]byte, len(msg))
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if _, err := client.Write(msg); err != nil {
			return 0, err
		}
		if viaReader {
			err = <-answers
		} else {
			_, err = io.ReadFull(client, buf)
		}
		if err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
