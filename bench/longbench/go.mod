module github.com/codexd/codexd/bench/longbench

go 1.26.8

require github.com/codexd/codexd v0.0.0

replace github.com/codexd/codexd => ../..
