module github.com/codexd/codexd/bench/execbench

go 1.26.8

require github.com/coder/websocket v1.8.15

require github.com/codexd/codexd v0.0.0

require (
	github.com/creack/pty v1.1.24 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/segmentio/asm v1.2.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/codexd/codexd => ../..
