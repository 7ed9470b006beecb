package rpcserve

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/codexd/codexd/jsonrpc"
)

// dialEnv makes the test binary a client: it dials the listener URL in it,
// calls echo and prints what happened ("echoed", or "refused: ...").
const dialEnv = "RPCSERVE_TEST_DIAL"

// dialAsClient runs in a child of the test process (see TestMain).
func dialAsClient(url string) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var st jsonrpc.Stream
	if path, ok := strings.CutPrefix(url, "unix://"); ok {
		nc, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("refused:", err)
			return
		}
		st = jsonrpc.NewLineStream(nc, 0)
	} else {
		ws, err := jsonrpc.DialWebSocket(ctx, url, nil, 0)
		if err != nil {
			fmt.Println("refused:", err)
			return
		}
		st = ws
	}
	c := jsonrpc.NewConn(st, jsonrpc.Options{})
	defer c.Close()
	var got string
	if err := c.Call(ctx, "echo", "hi", &got); err != nil || got != "hi" {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println("echoed")
}
