// Command testserver is a small MCP server for codexd's tests, written with
// the MCP Go SDK: it can start slowly, crash in the middle of a call or
// answer garbage, which no reference server does on demand.
//
// Flags: -delay D waits D before reading its input (a slow start);
// -garbage answers every line with text that is not JSON-RPC;
// -http ADDR serves streamable HTTP instead of stdio (and prints the URL);
// -protocol V negotiates only protocol version V.
//
// Tools: echo {text} returns the text; crash exits the process mid-call;
// slow {ms} sleeps, sending progress, until done or cancelled;
// pid returns the server's process id; -tool NAME adds one more echo tool;
// destroy {text} echoes but is annotated destructive, and open {text}
// echoes with every hint false (for approval decisions); elicit {message}
// asks the client for a form with a name field and returns the action and
// content it got; withdraw {message, ms, again} asks likewise with
// elicitation/create (which the SDK allows before protocol 2026-07-28
// only: see -protocol), gives up after ms milliseconds
// (notifications/cancelled), with again asks a second time and waits, and
// returns what came of it.
//
// It is a test fixture only: it must never be shipped or used by codexd itself.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

type elicitArgs struct {
	Message string `json:"message,omitempty" jsonschema:"what to ask the user"`
}

type withdrawArgs struct {
	Message string `json:"message,omitempty" jsonschema:"what to ask the user"`
	MS      int    `json:"ms" jsonschema:"how long to wait for the answer, in milliseconds"`
	Again   bool   `json:"again,omitempty" jsonschema:"ask a second time, waiting for the answer"`
}

type slowArgs struct {
	MS int `json:"ms" jsonschema:"how long to take, in milliseconds"`
}

func main() {
	delay := flag.Duration("delay", 0, "wait before serving")
	garbage := flag.Bool("garbage", false, "answer garbage")
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address")
	name := flag.String("name", "testserver", "server name")
	extra := flag.String("tool", "", "the name of one more tool, which echoes like echo")
	protocol := flag.String("protocol", "", "the only MCP protocol version to negotiate (an older one lets the server send elicitation/create to the SDK's client)")
	flag.Parse()
	time.Sleep(*delay)
	if *garbage {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println("this is not json-rpc {{{")
		}
		return
	}
	var opts *mcp.ServerOptions
	if *protocol != "" {
		opts = &mcp.ServerOptions{SupportedProtocolVersions: []string{*protocol}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: *name, Version: "1.0.0"}, opts)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	if *extra != "" {
		mcp.AddTool(s, &mcp.Tool{Name: *extra, Description: "Echoes its text."},
			func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
			})
	}
	yes, no := true, false
	mcp.AddTool(s, &mcp.Tool{Name: "destroy", Title: "Destroy", Description: "Echoes its text, destructively.", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "open", Description: "Echoes its text, harmlessly.", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}},
		func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit", Description: "Asks the user for a name."},
		func(ctx context.Context, req *mcp.CallToolRequest, a elicitArgs) (*mcp.CallToolResult, any, error) {
			// The SDK's multi round-trip form (SEP-2322): the first call
			// asks, the retry has the answer. For a client of an older
			// protocol (Codex 0.169) the SDK asks with elicitation/create.
			if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
				content, _ := json.Marshal(r.Content)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "action=" + r.Action + " content=" + string(content)}}}, nil, nil
			}
			msg := a.Message
			if msg == "" {
				msg = "What is your name?"
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: msg, RequestedSchema: json.RawMessage(
				`{"type":"object","properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}`)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "withdraw", Description: "Asks the user for a name, then gives up.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, a withdrawArgs) (*mcp.CallToolResult, any, error) {
			// elicitation/create itself, cancelled (the SDK sends
			// notifications/cancelled) when the wait is over.
			wait, cancel := context.WithTimeout(ctx, time.Duration(a.MS)*time.Millisecond)
			defer cancel()
			r, err := req.Session.Elicit(wait, &mcp.ElicitParams{Message: a.Message, RequestedSchema: json.RawMessage(
				`{"type":"object","properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}`)})
			text := "withdrawn"
			if err == nil {
				text = "answered: action=" + r.Action
			}
			if a.Again {
				r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: a.Message + " (again)", RequestedSchema: json.RawMessage(
					`{"type":"object","properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}`)})
				if err != nil {
					return nil, nil, err
				}
				text += "; then action=" + r.Action
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server mid-call."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the server's process id."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Takes its time, reporting progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
			steps := 4
			for i := 1; i <= steps; i++ {
				select {
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-time.After(time.Duration(a.MS/steps) * time.Millisecond):
				}
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: float64(steps), Message: fmt.Sprintf("step %d", i),
					})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		_ = http.Serve(ln, h)
		return
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
