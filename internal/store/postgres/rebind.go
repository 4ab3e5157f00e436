package postgres

import (
	"context"
	"database/sql/driver"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/stdlib"
)

// rebinder opens connections that speak sqlstore's SQL to PostgreSQL:
// ? placeholders become $1, $2, ..., and booleans are sent as the 0 or 1
// the schema's flag columns hold (BIGINT, as in SQLite).
type rebinder struct{ driver.Connector }

// Connect implements driver.Connector.
func (r rebinder) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c.(*stdlib.Conn)}, nil
}

// conn is a pgx connection whose statements are rebound.
type conn struct{ *stdlib.Conn }

// Prepare implements driver.Conn.
func (c *conn) Prepare(query string) (driver.Stmt, error) { return c.Conn.Prepare(rebind(query)) }

// PrepareContext implements driver.ConnPrepareContext.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

// ExecContext implements driver.ExecerContext.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

// QueryContext implements driver.QueryerContext.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// CheckNamedValue implements driver.NamedValueChecker: a boolean, or a
// valuer that gives one (sql.NullBool), is sent as an integer, and text
// as PostgreSQL takes it (see storable).
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if v, ok := nv.Value.(driver.Valuer); ok {
		val, err := v.Value()
		if err != nil {
			return err
		}
		nv.Value = val
	}
	if nv.Value == nil {
		return nil
	}
	switch rv := reflect.ValueOf(nv.Value); rv.Kind() {
	case reflect.Bool:
		nv.Value = int64(0)
		if rv.Bool() {
			nv.Value = int64(1)
		}
	case reflect.String:
		if s := rv.String(); !storable(s) {
			nv.Value = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
		}
	}
	return c.Conn.CheckNamedValue(nv)
}

// storable tells text PostgreSQL takes as it is: valid UTF-8 without NUL.
// SQLite keeps any bytes; here a task's message with a NUL or a broken
// character would be refused, and the run's round with it, so such bytes
// are stored as U+FFFD instead.
func storable(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// rebind numbers the ? placeholders of query outside quoted text.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n, quote := 0, byte(0)
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}
