package aggregatedapiserver

import (
	"bufio"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/proxy"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// connectProxy is an HTTP CONNECT proxy that records where it was asked to
// go and with which header.
type connectProxy struct {
	mu      sync.Mutex
	targets []string
	tokens  []string
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	p.mu.Lock()
	p.targets = append(p.targets, r.Host)
	p.tokens = append(p.tokens, r.Header.Get("X-Proxy-Token"))
	p.mu.Unlock()
	backend, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		backend.Close()
		return
	}
	_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() { _, _ = io.Copy(backend, conn); backend.Close() }()
	go func() { _, _ = io.Copy(conn, backend); conn.Close() }()
}

func (p *connectProxy) seen() ([]string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...), append([]string(nil), p.tokens...)
}

// Every request to a member with spec.proxyURL goes through the proxy,
// with spec.proxyHeader: plain ones and exec's and attach's upgrades, which
// went straight to the member.
func TestMemberTransportGoesThroughProxyURL(t *testing.T) {
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			_, _ = w.Write([]byte("plain"))
			return
		}
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
		_ = rw.Flush()
		line, _ := rw.ReadString('\n')
		_, _ = rw.WriteString("echo " + line)
		_ = rw.Flush()
	}))
	defer backend.Close()
	px := &connectProxy{}
	proxySrv := httptest.NewServer(px)
	defer proxySrv.Close()

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: backend.Certificate().Raw})
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: clusterv1alpha1.ClusterSpec{
		APIEndpoint: backend.URL, ProxyURL: proxySrv.URL, ProxyHeader: map[string]string{"X-Proxy-Token": "t0k"}}}
	d := &secretDialer{transports: map[string]cachedTransport{}}
	rt, err := d.transport(c, ca)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&http.Client{Transport: rt, Timeout: 5 * time.Second}).Get(backend.URL + "/version")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "plain" {
		t.Fatalf("plain request: %q", body)
	}

	// An upgrade, as the cluster proxy serves exec.
	loc, _ := url.Parse(backend.URL + "/api/v1/namespaces/default/pods/p/exec")
	front := httptest.NewServer(proxy.NewUpgradeAwareHandler(loc, rt, false, true, nil))
	defer front.Close()
	conn, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = conn.Write([]byte("GET /exec HTTP/1.1\r\nHost: front\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n"))
	br := bufio.NewReader(conn)
	status, _ := br.ReadString('\n')
	if !strings.Contains(status, "101") {
		t.Fatalf("upgrade answered %q", status)
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil || l == "\r\n" {
			break
		}
	}
	_, _ = conn.Write([]byte("ping\n"))
	if got, _ := br.ReadString('\n'); got != "echo ping\n" {
		t.Fatalf("through the upgraded connection: %q", got)
	}

	targets, tokens := px.seen()
	want := strings.TrimPrefix(backend.URL, "https://")
	if len(targets) != 2 || targets[0] != want || targets[1] != want || tokens[0] != "t0k" || tokens[1] != "t0k" {
		t.Errorf("the proxy saw CONNECT %v with tokens %v; want two (the request and the upgrade) to %s with t0k", targets, tokens, want)
	}
}
