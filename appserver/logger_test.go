package appserver

import (
	"io"
	"log/slog"
)

type slogLogger = slog.Logger

var slogDiscard = slog.New(slog.NewTextHandler(io.Discard, nil))
