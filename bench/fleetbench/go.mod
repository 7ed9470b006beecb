module github.com/codexd/codexd/bench/fleetbench

go 1.26.8

require github.com/codexd/codexd v0.0.0

replace github.com/codexd/codexd => ../..
