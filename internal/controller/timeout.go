package controller

import "time"

// deadline is when something that began at start and may last d must
// end; zero when there is no limit or it has not begun.
func deadline(start time.Time, d time.Duration) time.Time {
	if d <= 0 || start.IsZero() {
		return time.Time{}
	}
	return start.Add(d)
}

// expired reports whether deadline d has passed at now; a zero deadline
// never does.
func expired(d, now time.Time) bool {
	return !d.IsZero() && !now.Before(d)
}

// startOf is the time behind t, zero when t is nil.
func startOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
