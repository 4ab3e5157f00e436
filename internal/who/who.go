// Package who carries, in a request's context, who asked for an
// operation on a run (cancel, stop, suspend, unsuspend, retry), so that
// the run's events name them. The server puts the caller's token there;
// a command run on the embedded engine, the account that runs it; the
// engine's own callers (a schedule, a TTL, a federation) themselves.
package who

import "context"

type key struct{}

// With returns ctx carrying name as who asks.
func With(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, key{}, name)
}

// Asks returns who ctx says asks, or "" when it says nobody.
func Asks(ctx context.Context) string {
	name, _ := ctx.Value(key{}).(string)
	return name
}

// Or returns ctx as it is when it names who asks, else carrying name.
func Or(ctx context.Context, name string) context.Context {
	if Asks(ctx) != "" {
		return ctx
	}
	return With(ctx, name)
}
