package aggregatedapiserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/proxy"
)

// tunnelDialer returns a DialContext that reaches an address through the
// proxy at u (a Cluster's spec.proxyURL): an HTTP CONNECT (over TLS for an
// https proxy) with header (spec.proxyHeader) and the URL's user as basic
// credentials, or SOCKS5. Set as the member transport's dialer, it carries
// every request to the member, exec's and attach's upgrades included, which
// dial the member themselves and ignore a transport's Proxy.
func tunnelDialer(u *url.URL, header http.Header) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	var d net.Dialer
	switch u.Scheme {
	case "socks5", "socks5h":
		pd, err := proxy.FromURL(u, &d)
		if err != nil {
			return nil, err
		}
		cd, ok := pd.(proxy.ContextDialer)
		if !ok {
			return nil, fmt.Errorf("proxy %s cannot dial with a context", u.Redacted())
		}
		return cd.DialContext, nil
	case "http", "https":
	default:
		return nil, fmt.Errorf("unsupported proxy scheme %q: http, https or socks5", u.Scheme)
	}
	proxyAddr := u.Host
	if u.Port() == "" {
		proxyAddr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, "tcp", proxyAddr)
		if err != nil {
			return nil, fmt.Errorf("dialing the proxy %s: %w", u.Redacted(), err)
		}
		if u.Scheme == "https" {
			tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, fmt.Errorf("TLS with the proxy %s: %w", u.Redacted(), err)
			}
			conn = tc
		}
		req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: header.Clone()}
		if req.Header == nil {
			req.Header = http.Header{}
		}
		if u.User != nil {
			pw, _ := u.User.Password()
			req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
		}
		if deadline, ok := ctx.Deadline(); ok {
			_ = conn.SetDeadline(deadline)
		}
		if err := req.Write(conn); err != nil {
			conn.Close()
			return nil, fmt.Errorf("CONNECT through the proxy %s: %w", u.Redacted(), err)
		}
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, req)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("CONNECT through the proxy %s: %w", u.Redacted(), err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			conn.Close()
			return nil, fmt.Errorf("the proxy %s refused CONNECT %s: %s", u.Redacted(), addr, res.Status)
		}
		_ = conn.SetDeadline(time.Time{})
		if br.Buffered() > 0 {
			return &bufferedConn{Conn: conn, r: br}, nil
		}
		return conn, nil
	}, nil
}

// bufferedConn reads first what the proxy sent past its answer.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
