module github.com/codexd/codexd/bench/appbench

go 1.26.8

require (
	github.com/coder/websocket v1.8.15
	github.com/codexd/codexd v0.0.0
	golang.org/x/sys v0.49.0
)

replace github.com/codexd/codexd => ../..
