module github.com/codexd/codexd

go 1.26.8

require (
	github.com/coder/websocket v1.8.15
	github.com/creack/pty v1.1.24
	github.com/fsnotify/fsnotify v1.10.1
	github.com/go-json-experiment/json v1.27.2
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
)

require github.com/segmentio/asm v1.2.1
