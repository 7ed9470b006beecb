package appserver

import (
	"context"
	"errors"

	"github.com/codexd/codexd/agent"
)

// localImages refuses input with a local image the thread's turn could
// not read (a missing file, a directory, an unreadable one, a thread
// without environment access) with -32600 naming the path, before the
// input is submitted: nothing is recorded. Codex 0.169 runs such a turn
// with a placeholder in the image's place (README [image-missing-refused]).
// Whatever else the check meets (the exec-server cannot be reached) is
// left to the turn.
func localImages(ctx context.Context, t *thread, op agent.Op) error {
	var refused *agent.LocalImageError
	if err := t.th.CheckInput(ctx, op); errors.As(err, &refused) {
		return invalidRequest(refused.Error())
	}
	return nil
}
