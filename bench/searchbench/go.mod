module github.com/codexd/codexd/bench/searchbench

go 1.26.8
