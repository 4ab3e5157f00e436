package store

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// String is the cursor as clients carry it between pages.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixNano(), 10) + "/" + string(c.ID)))
}

// ParseCursor reads a cursor String wrote.
func ParseCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	at, id, ok := strings.Cut(string(b), "/")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil {
		return nil, errors.New("store: malformed cursor")
	}
	return &Cursor{CreatedAt: time.Unix(0, n).UTC(), ID: apiv1.RunID(id)}, nil
}
