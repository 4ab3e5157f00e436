package server

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// limitListener bounds the connections open at once, in all and from
// one client. A connection beyond perClient open from its client is
// closed as soon as it is accepted, so one client cannot take every
// connection. At total, a new connection takes the place of the
// connection open longest without a request in hand, among those that
// never presented a credential first: an idle kept-alive connection or
// one still sending its first headers costs its client only a new dial,
// so a flood of idle connections from many addresses cannot shut out an
// admin or /healthz. Only when every connection is serving a request is
// a new one closed. Connections it keeps are closed by the http.Server's
// header and idle timeouts as well.
type limitListener struct {
	net.Listener
	total, perClient int // < 0: no bound
	log              *slog.Logger

	mu       sync.Mutex
	conns    map[*limitedConn]struct{}
	byClient map[string]int
	refused  int       // connections refused so far
	evicted  int       // connections closed to make room so far
	warned   time.Time // when refusals were last logged
}

var _ net.Listener = (*limitListener)(nil)

func newLimitListener(ln net.Listener, total, perClient int, log *slog.Logger) *limitListener {
	return &limitListener{
		Listener: ln, total: total, perClient: perClient, log: log,
		conns: map[*limitedConn]struct{}{}, byClient: map[string]int{},
	}
}

// Accept returns the next connection within the bounds, closing those
// beyond them on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l, client: clientKey(c.RemoteAddr().String())}
		admitted, victim := l.admit(lc)
		if victim != nil {
			_ = victim.Close()
		}
		if admitted {
			return lc, nil
		}
		if tc, ok := c.(interface{ SetLinger(sec int) error }); ok {
			_ = tc.SetLinger(0) // reset: nothing lingers in TIME_WAIT either
		}
		_ = c.Close()
	}
}

// admit counts c if the bounds allow it, making room at the total by
// taking the place of the connection evict names, which the caller
// closes.
func (l *limitListener) admit(c *limitedConn) (admitted bool, victim *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perClient >= 0 && l.byClient[c.client] >= l.perClient {
		l.refuse(c.client, "from one client")
		return false, nil
	}
	if l.total >= 0 && len(l.conns) >= l.total {
		if victim = l.evict(); victim == nil {
			l.refuse(c.client, "in all, every one serving a request")
			return false, nil
		}
		l.forget(victim)
		l.evicted++
	}
	c.since = time.Now()
	l.conns[c] = struct{}{}
	l.byClient[c.client]++
	return true, victim
}

// evict picks the connection to close for a new one: of those with no
// request in hand, one that never presented a credential before one
// that did, and among equals the one that has waited longest. Nil when
// every connection is serving a request.
func (l *limitListener) evict() *limitedConn {
	var best *limitedConn
	for c := range l.conns {
		if c.busy > 0 {
			continue
		}
		if best == nil || (best.trusted && !c.trusted) || (best.trusted == c.trusted && c.since.Before(best.since)) {
			best = c
		}
	}
	return best
}

// refuse counts a refusal, and logs refusals at most once a minute.
func (l *limitListener) refuse(client, bound string) {
	l.refused++
	if now := time.Now(); now.Sub(l.warned) >= time.Minute {
		l.warned = now
		l.log.Warn("refusing connections beyond the limits", "bound", bound, "client", client, "open", len(l.conns),
			"openFromClient", l.byClient[client], "refusedSoFar", l.refused, "closedToMakeRoomSoFar", l.evicted)
	}
}

// forget gives c's place back; it is a no-op for a connection already
// forgotten.
func (l *limitListener) forget(c *limitedConn) {
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	if l.byClient[c.client]--; l.byClient[c.client] <= 0 {
		delete(l.byClient, c.client)
	}
}

func (l *limitListener) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(c)
}

// counts returns how many connections are open, in all and from client,
// and how many have been refused.
func (l *limitListener) counts(client string) (open, fromClient, refused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns), l.byClient[client], l.refused
}

// limitedConn is a connection the listener counts: it gives its place
// back when it is closed, once, and tells the listener when it serves a
// request and whether it has presented a credential.
type limitedConn struct {
	net.Conn
	l      *limitListener
	client string
	once   sync.Once

	// guarded by l.mu
	since   time.Time // accepted, or its last request done
	busy    int       // requests in hand
	trusted bool      // a request on it presented a credential the server knows
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// serving marks c as serving a request until the returned func is
// called.
func (c *limitedConn) serving() (done func()) {
	c.l.mu.Lock()
	c.busy++
	c.l.mu.Unlock()
	return func() {
		c.l.mu.Lock()
		c.busy--
		c.since = time.Now()
		c.l.mu.Unlock()
	}
}

// trust marks c as having presented a known credential: at the total,
// connections that never did are closed first.
func (c *limitedConn) trust() {
	c.l.mu.Lock()
	c.trusted = true
	c.l.mu.Unlock()
}

// connKey is the context key under which a request finds its connection.
type connKey struct{}

// withConn is the http.Server's ConnContext: it lets a request's
// handlers reach the limitedConn under it, through TLS too.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// connOf returns the limitedConn a request came on, nil if none.
func connOf(ctx context.Context) *limitedConn {
	lc, _ := ctx.Value(connKey{}).(*limitedConn)
	return lc
}

// clientKey names the client of a remote address, host:port, for limits:
// its IP address, or for IPv6 its /64, which one subscriber usually
// holds whole. An address it cannot read is its own key.
func clientKey(remote string) string {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return remote
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		return netip.PrefixFrom(ip, 64).Masked().String()
	}
	return ip.String()
}
