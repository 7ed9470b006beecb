package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/codexd/codexd/agent"
)

// Page sizes of List: a zero Limit gets DefaultPageSize, and no page is
// larger than MaxPageSize.
const (
	DefaultPageSize = 25
	MaxPageSize     = 1000
)

// Sort keys of agent.ThreadQuery.
const (
	SortCreatedAt = "created_at"
	SortUpdatedAt = "updated_at"
)

// A cursor is a position in the listing, as Codex's is: the sort key's
// value and the thread id of the last entry of a page, written
// "<RFC 3339 time>|<id>" (Codex's form; codexd keeps the nanoseconds). A
// page starts strictly after it, so a thread that left the listing
// (archived) or arrived meanwhile neither invalidates the cursor nor
// shifts what follows, and the cursor of one order can continue another
// (it is only a position). A bare time, with no id, is an anchor that
// includes that millisecond: the backwards cursor of a page.
type cursor struct {
	at     int64 // Unix nanoseconds of the sort key
	id     string
	anchor bool // a bare time: the millisecond at is included
}

// EncodeCursor is the cursor after a thread whose sort key is at.
func EncodeCursor(at time.Time, id string) string {
	return at.UTC().Format(time.RFC3339Nano) + "|" + id
}

func decodeCursor(s string) (cursor, error) {
	bad := fmt.Errorf("%w: %s", ErrInvalidCursor, s)
	ts, id, hasID := strings.Cut(s, "|")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return cursor{}, bad
	}
	if !hasID {
		return cursor{at: nanos(t), anchor: true}, nil
	}
	if _, err := uuid.Parse(id); err != nil || strings.Contains(id, "|") {
		return cursor{}, bad
	}
	return cursor{at: nanos(t), id: id}, nil
}

// list answers a query from the index.
func (x *index) list(ctx context.Context, q agent.ThreadQuery) (agent.ThreadPage, error) {
	key := q.SortKey
	switch key {
	case "":
		key = SortCreatedAt
	case SortCreatedAt, SortUpdatedAt:
	default:
		return agent.ThreadPage{}, fmt.Errorf("store: unknown sort key %q", q.SortKey)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	limit = min(limit, MaxPageSize)

	var sb strings.Builder
	args := []any{boolInt(q.Archived)}
	sb.WriteString("SELECT " + rowColumns + " FROM threads WHERE archived = ?")
	if q.Cwd != "" {
		sb.WriteString(" AND start_cwd = ?")
		args = append(args, q.Cwd)
	}
	in := func(col string, vals []string) {
		if len(vals) == 0 {
			return
		}
		sb.WriteString(" AND " + col + " IN (?" + strings.Repeat(",?", len(vals)-1) + ")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	in("start_cwd", q.Cwds)
	in("model_provider", q.ModelProviders)
	in("source", q.SourceKinds)
	if q.SearchTerm != "" {
		sb.WriteString(" AND instr(search, ?) > 0")
		args = append(args, strings.ToLower(q.SearchTerm))
	}
	op, dir := "<", "DESC"
	if q.Ascending {
		op, dir = ">", "ASC"
	}
	if q.Cursor != "" {
		c, err := decodeCursor(q.Cursor)
		if err != nil {
			return agent.ThreadPage{}, err
		}
		switch {
		case c.anchor && q.Ascending:
			sb.WriteString(" AND " + key + " >= ?")
			args = append(args, c.at)
		case c.anchor:
			sb.WriteString(" AND " + key + " < ?")
			args = append(args, c.at+int64(time.Millisecond))
		default:
			sb.WriteString(" AND (" + key + ", id) " + op + " (?, ?)")
			args = append(args, c.at, c.id)
		}
	}
	sb.WriteString(" ORDER BY " + key + " " + dir + ", id " + dir + " LIMIT ?")
	args = append(args, limit+1)

	rows, err := x.db.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return agent.ThreadPage{}, err
	}
	defer rows.Close()
	var page agent.ThreadPage
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return agent.ThreadPage{}, err
		}
		r.info.Cwd = r.startCwd // Codex lists a thread in the cwd it started in
		page.Threads = append(page.Threads, r.info)
	}
	if err := rows.Err(); err != nil {
		return agent.ThreadPage{}, err
	}
	if len(page.Threads) > limit {
		page.Threads = page.Threads[:limit]
		last := page.Threads[limit-1]
		at := last.CreatedAt
		if key == SortUpdatedAt {
			at = last.UpdatedAt
		}
		page.NextCursor = EncodeCursor(at, last.ID)
	}
	return page, nil
}
