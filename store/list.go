package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

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

// cursorV1 is the position after the last thread of a page: its sort key
// value and id (the tie-break). Keyset pagination: a page starts strictly
// after that position, so threads inserted meanwhile neither shift nor
// repeat what the client has seen. The sort key and direction are part of
// the cursor, so a cursor is refused by a query that orders differently.
type cursorV1 struct {
	Key string `json:"k"`
	Asc bool   `json:"a"`
	At  int64  `json:"t"`
	ID  string `json:"i"`
}

func encodeCursor(c cursorV1) string {
	b, _ := jsonv2.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s, key string, asc bool) (cursorV1, error) {
	var c cursorV1
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || jsonv2.Unmarshal(b, &c) != nil {
		return c, fmt.Errorf("%w: %q", ErrInvalidCursor, s)
	}
	if c.Key != key || c.Asc != asc {
		return c, fmt.Errorf("%w: it continues another ordering", ErrInvalidCursor)
	}
	return c, nil
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
		sb.WriteString(" AND cwd = ?")
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
	in("cwd", q.Cwds)
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
		c, err := decodeCursor(q.Cursor, key, q.Ascending)
		if err != nil {
			return agent.ThreadPage{}, err
		}
		sb.WriteString(" AND (" + key + ", id) " + op + " (?, ?)")
		args = append(args, c.At, c.ID)
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
		page.NextCursor = encodeCursor(cursorV1{Key: key, Asc: q.Ascending, At: nanos(at), ID: last.ID})
	}
	return page, nil
}
