package server

import "time"

// Limits bound what clients may take of a server: time, connections,
// memory and requests, so that no client, with a token or without, can
// starve the others. A zero field takes its default (DefaultLimits); a
// negative one means no limit, except for MaxBody, which always has one.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers; a new
	// connection that sends none is closed after it. Default 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included: a body
	// that trickles in is cut off (408). A handler still running after it
	// sees its context cancelled; streams lift it. Default 1m.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, from the end of its
	// request's headers; streams renew it before each write, so only a
	// client that stops reading is cut off. Default 1m.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no new
	// request for this long. Default 1m.
	IdleTimeout time.Duration

	// MaxConns bounds the connections open at once, in all; one more is
	// closed as soon as it is accepted. Default 4096.
	MaxConns int
	// MaxConnsPerClient bounds the connections open at once from one
	// client address (for IPv6, one /64). Behind a reverse proxy every
	// client has the proxy's address: set it to -1 there and bound
	// clients at the proxy. Default 256.
	MaxConnsPerClient int

	// MaxBody is the largest request body accepted, in bytes. A larger
	// Content-Length is refused before the body is read (413). Default
	// 1 MiB: checking a submission that large can take about 135 MiB.
	MaxBody int64
	// MaxSubmits bounds the submissions read and checked at once; one
	// more waits up to SubmitWait for a turn, then is refused (503).
	// Default 4.
	MaxSubmits int
	// SubmitWait is how long a submission waits for a turn. Default 1s.
	SubmitWait time.Duration

	// Rate is how many requests per second one token may make on
	// average, and Burst how many at once; more are refused (429).
	// Defaults 100 and 200.
	Rate  float64
	Burst int
	// ClientRate and ClientBurst are the same for requests without a
	// known token (public routes, a missing or unknown token), per client
	// address. /healthz is never limited. Defaults 20 and 100.
	ClientRate  float64
	ClientBurst int

	// Heartbeat is how long an event stream stays silent at most: past
	// it, the stream sends a comment (": ping"), so that clients and the
	// proxies between them know it is alive. Default 15s.
	Heartbeat time.Duration
}

// DefaultLimits returns the limits a server has unless told otherwise.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       time.Minute,
		MaxConns:          4096,
		MaxConnsPerClient: 256,
		MaxBody:           1 << 20,
		MaxSubmits:        4,
		SubmitWait:        time.Second,
		Rate:              100,
		Burst:             200,
		ClientRate:        20,
		ClientBurst:       100,
		Heartbeat:         15 * time.Second,
	}
}

// withDefaults fills in l's zero fields.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	orDefault(&l.ReadTimeout, d.ReadTimeout)
	orDefault(&l.WriteTimeout, d.WriteTimeout)
	orDefault(&l.IdleTimeout, d.IdleTimeout)
	orDefault(&l.MaxConns, d.MaxConns)
	orDefault(&l.MaxConnsPerClient, d.MaxConnsPerClient)
	if l.MaxBody <= 0 {
		l.MaxBody = d.MaxBody
	}
	orDefault(&l.MaxSubmits, d.MaxSubmits)
	orDefault(&l.SubmitWait, d.SubmitWait)
	orDefault(&l.Rate, d.Rate)
	orDefault(&l.Burst, d.Burst)
	orDefault(&l.ClientRate, d.ClientRate)
	orDefault(&l.ClientBurst, d.ClientBurst)
	orDefault(&l.Heartbeat, d.Heartbeat)
	return l
}

func orDefault[T time.Duration | int | int64 | float64](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}
