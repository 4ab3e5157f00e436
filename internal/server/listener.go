package server

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// limitListener closes, as soon as it has accepted it, a connection
// beyond total open in all or beyond perClient open from its client, so
// that a flood of connections costs no descriptors beyond those bounds
// and one client cannot take every connection. Connections it keeps are
// closed by the http.Server's header and idle timeouts.
type limitListener struct {
	net.Listener
	total, perClient int // < 0: no bound
	log              *slog.Logger

	mu       sync.Mutex
	open     int
	byClient map[string]int
	refused  int       // connections refused so far
	warned   time.Time // when refusals were last logged
}

var _ net.Listener = (*limitListener)(nil)

func newLimitListener(ln net.Listener, total, perClient int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, total: total, perClient: perClient, log: log, byClient: map[string]int{}}
}

// Accept returns the next connection within the bounds, closing those
// beyond them on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientKey(c.RemoteAddr().String())
		if l.admit(client) {
			return &limitedConn{Conn: c, release: func() { l.release(client) }}, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // reset: nothing lingers in TIME_WAIT either
		}
		_ = c.Close()
	}
}

// admit counts a connection from client if the bounds allow it.
func (l *limitListener) admit(client string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if (l.total >= 0 && l.open >= l.total) || (l.perClient >= 0 && l.byClient[client] >= l.perClient) {
		l.refused++
		if now := time.Now(); now.Sub(l.warned) >= time.Minute {
			l.warned = now
			l.log.Warn("refusing connections beyond the limits", "client", client, "open", l.open,
				"openFromClient", l.byClient[client], "refusedSoFar", l.refused)
		}
		return false
	}
	l.open++
	l.byClient[client]++
	return true
}

func (l *limitListener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byClient[client]--; l.byClient[client] <= 0 {
		delete(l.byClient, client)
	}
}

// counts returns how many connections are open, in all and from client,
// and how many have been refused.
func (l *limitListener) counts(client string) (open, fromClient, refused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.byClient[client], l.refused
}

// limitedConn gives its place back when it is closed, once.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
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
