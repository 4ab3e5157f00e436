package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TLSListener is Listener for a server that serves HTTPS on ln: a client
// that speaks plain HTTP to it is answered, in plain HTTP, 400 with a
// coded JSON error (KLN-4072), where net/http would answer in text.
func (s *Server) TLSListener(ln net.Listener) net.Listener {
	return s.Listener(httpsOnlyListener{ln})
}

// httpsOnlyListener accepts connections that answer a plain HTTP request.
type httpsOnlyListener struct{ net.Listener }

func (l httpsOnlyListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &httpsOnlyConn{Conn: c}, nil
}

// httpsOnlyConn looks at the first bytes a client sends: a TLS record
// passes, a plain HTTP request (a method's capital letters) is answered
// and the connection ends.
type httpsOnlyConn struct {
	net.Conn
	looked bool
}

// errPlainHTTP ends the handshake of a client that spoke plain HTTP.
var errPlainHTTP = errors.New("a plain HTTP request to the HTTPS port: answered 400 KLN-4072")

func (c *httpsOnlyConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.looked || n == 0 {
		return n, err
	}
	c.looked = true
	if b[0] < 'A' || b[0] > 'Z' { // a TLS handshake begins 0x16
		return n, err
	}
	_, _ = c.Write(plainHTTPAnswer)
	return 0, errPlainHTTP
}

// SetLinger sets the linger of the TCP connection beneath, if it is one.
func (c *httpsOnlyConn) SetLinger(sec int) error {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		return tc.SetLinger(sec)
	}
	return nil
}

// plainHTTPAnswer is the whole answer to a plain HTTP request.
var plainHTTPAnswer = func() []byte {
	body, _ := json.Marshal(apiv1.ErrorList{Errors: withHints([]*apiv1.Error{apiv1.Errorf(apiv1.CodeHTTPSOnly,
		"this server speaks HTTPS only: the request came as plain HTTP")})})
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		http.StatusBadRequest, http.StatusText(http.StatusBadRequest), len(body), body)
}()
