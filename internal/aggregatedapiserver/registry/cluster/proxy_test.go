package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// What a member receives: none of the caller's credentials or claimed
// identities, the impersonator's token, and the authenticated caller.
func TestForwardHeaders(t *testing.T) {
	in := http.Header{
		"Authorization":           {"Bearer the-callers-own-token"},
		"Proxy-Authorization":     {"Basic xyz"},
		"Cookie":                  {"session=1"},
		"Impersonate-User":        {"system:admin"},
		"Impersonate-Group":       {"system:masters"},
		"Impersonate-Extra-Scope": {"all"},
		"X-Remote-User":           {"mallory"},
		"X-Remote-Group":          {"system:masters"},
		"Accept":                  {"application/json"},
		"Content-Type":            {"application/merge-patch+json"},
		"Connection":              {"Upgrade"},
		"Upgrade":                 {"SPDY/3.1"},
	}
	caller := &user.DefaultInfo{Name: "alice", UID: "42", Groups: []string{"devs", user.SystemPrivilegedGroup, user.AllAuthenticated},
		Extra: map[string][]string{"scopes.example.com/project": {"a", "b"}}}
	out := ForwardHeaders(in, caller, "impersonator-token")
	want := http.Header{
		"Authorization":     {"Bearer impersonator-token"},
		"Impersonate-User":  {"alice"},
		"Impersonate-Uid":   {"42"},
		"Impersonate-Group": {"devs"},
		"Accept":            {"application/json"},
		"Content-Type":      {"application/merge-patch+json"},
		"Connection":        {"Upgrade"},
		"Upgrade":           {"SPDY/3.1"},
	}
	want.Add("Impersonate-Extra-"+url.PathEscape("scopes.example.com/project"), "a")
	want.Add("Impersonate-Extra-"+url.PathEscape("scopes.example.com/project"), "b")
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Errorf("forwarded headers\n got %v\nwant %v", out, want)
	}
	if in.Get("Authorization") != "Bearer the-callers-own-token" {
		t.Error("the incoming headers were modified")
	}
}

func TestLocation(t *testing.T) {
	base, _ := url.Parse("https://member.example.com:6443/prefix")
	for p, want := range map[string]string{
		"api/v1/pods":         "https://member.example.com:6443/prefix/api/v1/pods",
		"/api/v1/namespaces/": "https://member.example.com:6443/prefix/api/v1/namespaces/",
		"../../etc/passwd":    "https://member.example.com:6443/prefix/etc/passwd",
		"":                    "https://member.example.com:6443/prefix",
	} {
		if got := Location(base, p).String(); got != want {
			t.Errorf("Location(%q) = %s, want %s", p, got, want)
		}
	}
}

// getter answers one Cluster.
type getter struct{ c *clusterv1alpha1.Cluster }

func (g getter) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if g.c == nil || g.c.Name != name {
		return nil, apierrors.NewNotFound(clusterv1alpha1.SchemeGroupVersion.WithResource("clusters").GroupResource(), name)
	}
	return g.c, nil
}

// dialer reaches one test server.
type dialer struct {
	srv *httptest.Server
	err error
}

func (d dialer) Dial(context.Context, *clusterv1alpha1.Cluster) (*Connection, error) {
	if d.err != nil {
		return nil, d.err
	}
	u, _ := url.Parse(d.srv.URL)
	return &Connection{Endpoint: u, Transport: d.srv.Client().Transport, Token: "impersonator-token"}, nil
}

type responder struct{ err error }

func (r *responder) Object(int, runtime.Object) {}
func (r *responder) Error(err error)            { r.err = err }

// A request through the proxy reaches the member's path with its method,
// query and body, as the caller; an upgrade (exec, attach) is proxied both
// ways; an unknown Cluster or an unreachable member is an API error.
func TestConnect(t *testing.T) {
	var got *http.Request
	var body string
	member := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		if strings.EqualFold(r.Header.Get("Connection"), "Upgrade") {
			conn, rw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
			_ = rw.Flush()
			line, _ := rw.ReadString('\n')
			_, _ = rw.WriteString("echo " + line)
			_ = rw.Flush()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"PodList"}`)
	}))
	defer member.Close()
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	p := NewProxyREST(getter{cl}, dialer{srv: member})
	caller := &user.DefaultInfo{Name: "alice", Groups: []string{"devs"}}
	ctx := request.WithUser(context.Background(), caller)

	serve := func(method, target, reqBody string, hdr http.Header) *httptest.ResponseRecorder {
		t.Helper()
		h, err := p.Connect(ctx, "member1", &clusterv1alpha1.ClusterProxyOptions{Path: "/api/v1/namespaces/default/pods"}, &responder{})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(method, target, strings.NewReader(reqBody))
		for k, v := range hdr {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := serve(http.MethodPost, "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/default/pods?dryRun=All",
		`{"kind":"Pod"}`, http.Header{"Authorization": {"Bearer the-callers-own-token"}})
	if rec.Code != http.StatusOK || rec.Body.String() != `{"kind":"PodList"}` {
		t.Fatalf("proxied answer %d %q", rec.Code, rec.Body.String())
	}
	if got.Method != http.MethodPost || got.URL.Path != "/api/v1/namespaces/default/pods" || got.URL.RawQuery != "dryRun=All" || body != `{"kind":"Pod"}` {
		t.Errorf("the member got %s %s?%s %q", got.Method, got.URL.Path, got.URL.RawQuery, body)
	}
	if got.Header.Get("Authorization") != "Bearer impersonator-token" || got.Header.Get("Impersonate-User") != "alice" || got.Header.Get("Impersonate-Group") != "devs" {
		t.Errorf("the member got the headers %v", got.Header)
	}

	// An upgrade, as kubectl exec makes: both directions flow.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := p.Connect(ctx, "member1", &clusterv1alpha1.ClusterProxyOptions{Path: "/api/v1/namespaces/default/pods/web/exec"}, &responder{})
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer front.Close()
	conn, err := (&rawDialer{}).dial(front.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /exec?command=ls&stdout=true HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\nAuthorization: Bearer the-callers-own-token\r\n\r\n")
	r := bufio.NewReader(conn)
	status, _ := r.ReadString('\n')
	if !strings.Contains(status, "101") {
		t.Fatalf("upgrade answered %q", status)
	}
	for {
		l, err := r.ReadString('\n')
		if err != nil || l == "\r\n" {
			break
		}
	}
	_, _ = io.WriteString(conn, "hello\n")
	if echo, _ := r.ReadString('\n'); echo != "echo hello\n" {
		t.Errorf("through the upgraded connection: %q", echo)
	}
	if got.URL.Path != "/api/v1/namespaces/default/pods/web/exec" || got.Header.Get("Authorization") != "Bearer impersonator-token" || got.Header.Get("Impersonate-User") != "alice" {
		t.Errorf("the upgrade reached the member as %s with %v", got.URL.Path, got.Header)
	}
	// The command and the streams are the query: it reaches the member.
	if got.URL.RawQuery != "command=ls&stdout=true" {
		t.Errorf("the upgrade reached the member with the query %q, want the caller's", got.URL.RawQuery)
	}

	// Errors.
	if _, err := p.Connect(ctx, "nope", &clusterv1alpha1.ClusterProxyOptions{}, &responder{}); !apierrors.IsNotFound(err) {
		t.Errorf("an unknown cluster: %v, want NotFound", err)
	}
	down := NewProxyREST(getter{cl}, dialer{err: apierrors.NewServiceUnavailable("cluster member1 is in Pull mode")})
	if _, err := down.Connect(ctx, "member1", &clusterv1alpha1.ClusterProxyOptions{}, &responder{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("an unreachable member: %v, want ServiceUnavailable", err)
	}
	if _, err := p.Connect(context.Background(), "member1", &clusterv1alpha1.ClusterProxyOptions{}, &responder{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("no user: %v, want Unauthorized", err)
	}
}

type rawDialer struct{}

func (rawDialer) dial(raw string) (net.Conn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	return net.Dial("tcp", u.Host)
}
