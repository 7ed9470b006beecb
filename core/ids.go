package core

import "github.com/google/uuid"

// newUUIDv7 returns a time-ordered UUID (RFC 9562 version 7), as Codex's
// thread and turn ids are. google/uuid keeps the ids of one process
// strictly increasing, even within a millisecond.
func newUUIDv7() string {
	return uuid.Must(uuid.NewV7()).String()
}
