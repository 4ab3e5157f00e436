package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/server"
)

// limitFlags are kiln serve's bounds on what clients may take; their
// defaults are the server's (server.DefaultLimits).
type limitFlags struct {
	server.Limits
	maxBody string
}

func newLimitFlags() *limitFlags {
	return &limitFlags{Limits: server.DefaultLimits(), maxBody: "1Mi"}
}

func (l *limitFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.DurationVar(&l.ReadHeaderTimeout, "read-header-timeout", l.ReadHeaderTimeout, "close a connection that takes longer to send a request's headers")
	fs.DurationVar(&l.ReadTimeout, "read-timeout", l.ReadTimeout, "answer 408 to a request whose body takes longer to arrive (streams of events and logs are exempt)")
	fs.DurationVar(&l.WriteTimeout, "write-timeout", l.WriteTimeout, "cut off a client that takes longer to read a response (streams: longer to read one write)")
	fs.DurationVar(&l.IdleTimeout, "idle-timeout", l.IdleTimeout, "close a kept-alive connection idle for longer")
	fs.IntVar(&l.MaxConns, "max-conns", l.MaxConns, "connections open at once, in all; more are closed at once (-1: no limit)")
	fs.IntVar(&l.MaxConnsPerClient, "max-conns-per-client", l.MaxConnsPerClient, "connections open at once from one client address, an IPv6 /64 (-1: no limit, e.g. behind a reverse proxy)")
	fs.StringVar(&l.maxBody, "max-body", l.maxBody, "largest request body, e.g. 512Ki or 4Mi; a submission that large can take over 100 times its size in memory to check")
	fs.IntVar(&l.MaxSubmits, "max-submits", l.MaxSubmits, "submissions read and checked at once; one more waits a second, then gets 503 (-1: no limit)")
	fs.Float64Var(&l.Rate, "rate", l.Rate, "requests per second one token may make on average; more get 429 (-1: no limit)")
	fs.IntVar(&l.Burst, "burst", l.Burst, "requests one token may make at once")
	fs.Float64Var(&l.ClientRate, "client-rate", l.ClientRate, "requests per second, on average, from one client address without a known token (-1: no limit)")
	fs.IntVar(&l.ClientBurst, "client-burst", l.ClientBurst, "requests at once from one client address without a known token")
}

// resolve checks the flags and returns the limits they set.
func (l *limitFlags) resolve() (server.Limits, error) {
	out := l.Limits
	var errs []error
	body, err := resource.ParseBytes(l.maxBody)
	if err != nil || body <= 0 {
		errs = append(errs, usagef("--max-body %q is not a positive size such as 1Mi", l.maxBody))
	}
	out.MaxBody = body
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--read-header-timeout", l.ReadHeaderTimeout},
		{"--read-timeout", l.ReadTimeout},
		{"--write-timeout", l.WriteTimeout},
		{"--idle-timeout", l.IdleTimeout},
	} {
		if d.v <= 0 {
			errs = append(errs, usagef("%s %s is not a positive duration", d.flag, d.v))
		}
	}
	for _, n := range []struct {
		flag string
		v    float64
	}{
		{"--max-conns", float64(l.MaxConns)},
		{"--max-conns-per-client", float64(l.MaxConnsPerClient)},
		{"--max-submits", float64(l.MaxSubmits)},
		{"--rate", l.Rate},
		{"--client-rate", l.ClientRate},
	} {
		if n.v <= 0 && n.v != -1 {
			errs = append(errs, usagef("%s %g is neither positive nor -1 (no limit)", n.flag, n.v))
		}
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"--burst", l.Burst}, {"--client-burst", l.ClientBurst}} {
		if n.v <= 0 {
			errs = append(errs, usagef("%s %d is not a positive number", n.flag, n.v))
		}
	}
	return out, errors.Join(errs...)
}
