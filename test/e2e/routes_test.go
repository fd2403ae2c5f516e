//go:build e2e

package e2e

// The route walk: every row of internal/routes' table, called on the
// running fleet as every identity in every path spelling; an answer the row
// does not allow fails, and so does a route no row lists.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authuser "k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/routes"
)

// walker is an identity of the walk: its credentials (the same for every
// server), and a certificate for the estimators when it holds one.
type walker struct {
	name string
	// token or cert/key; neither for anonymous.
	token     string
	cert, key []byte
	grpc      *tls.Certificate
}

// user is how a cluster authenticates a walker (nil: it does not).
type user struct {
	name   string
	groups []string
	extra  map[string]authorizationv1.ExtraValue
}

// instance is one listener of one running server.
type instance struct {
	server, cluster string
	listener        routes.Listener
	base            string // scheme://host:port
}

type routeWalk struct {
	t        *testing.T
	admins   map[string]kubernetes.Interface // by cluster
	hosts    map[string]string               // API server URL by cluster
	walkers  []walker
	mu       sync.Mutex
	users    map[string]*user // walker/cluster
	reviews  map[string]bool  // cluster/user/check
	requests int
}

func (w *routeWalk) client(id walker) *http.Client {
	tc := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // the walk checks who is answered, not the servers' names
	if id.cert != nil {
		pair, err := tls.X509KeyPair(id.cert, id.key)
		if err != nil {
			w.t.Fatalf("%s: %v", id.name, err)
		}
		// Sent whatever CAs the server names, as client-go (and an attacker)
		// would: crypto/tls alone sends none that the server's list misses.
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// userOn is how cluster authenticates id: a SelfSubjectReview made with
// its credentials (an anonymous one as system:anonymous when the cluster
// lets anonymous requests in).
func (w *routeWalk) userOn(ctx context.Context, id walker, cluster string) *user {
	key := id.name + "/" + cluster
	w.mu.Lock()
	u, ok := w.users[key]
	w.mu.Unlock()
	if ok {
		return u
	}
	cfg := &rest.Config{Host: w.hosts[cluster], BearerToken: id.token, Timeout: 10 * time.Second, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertData: id.cert, KeyData: id.key}}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	r, err := kc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		u = &user{name: r.Status.UserInfo.Username, groups: r.Status.UserInfo.Groups, extra: map[string]authorizationv1.ExtraValue{}}
		for k, v := range r.Status.UserInfo.Extra {
			u.extra[k] = authorizationv1.ExtraValue(v)
		}
	case apierrors.IsUnauthorized(err):
	case apierrors.IsForbidden(err):
		// Taken for anonymous: no credential, or a certificate of a CA the
		// cluster does not trust (the anonymous authenticator comes last).
		u = &user{name: "system:anonymous", groups: []string{"system:unauthenticated"}}
	default:
		w.t.Fatalf("asking %s who %s is: %v", cluster, id.name, err)
	}
	w.mu.Lock()
	w.users[key] = u
	w.mu.Unlock()
	return u
}

// allowed is whether cluster's authorizer lets u do c.
func (w *routeWalk) allowed(ctx context.Context, cluster string, u *user, c routes.Check) bool {
	key := fmt.Sprintf("%s/%s/%v/%+v", cluster, u.name, u.groups, c)
	w.mu.Lock()
	v, ok := w.reviews[key]
	w.mu.Unlock()
	if ok {
		return v
	}
	spec := authorizationv1.SubjectAccessReviewSpec{User: u.name, Groups: u.groups, Extra: u.extra}
	if c.NonResourceURL != "" {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Verb: c.Verb, Path: c.NonResourceURL}
	} else {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: c.Verb, Group: c.Group, Resource: c.Resource,
			Subresource: c.Subresource, Namespace: c.Namespace, Name: c.Name}
	}
	r, err := w.admins[cluster].AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("reviewing %v for %s in %s: %v", c, u.name, cluster, err)
	}
	w.mu.Lock()
	w.reviews[key] = r.Status.Allowed
	w.mu.Unlock()
	return r.Status.Allowed
}

// forwarded is u as the cluster proxy impersonates it in a member: its
// name and the groups the proxy forwards (join.ForwardedGroups: never
// system:masters).
func forwarded(u *user) *user {
	return &user{name: u.name, groups: join.ForwardedGroups(&authuser.DefaultInfo{Name: u.name, Groups: u.groups})}
}

// expect is whether row answers id at in, and whether a refusal may
// instead be a 401 for a credential the server cannot authenticate.
func (w *routeWalk) expect(ctx context.Context, in instance, r routes.Route, id walker) (allowed, unauthenticated bool) {
	reviewer := routes.OnKarmada
	if in.cluster != plan.ControlPlane {
		reviewer = routes.OnMember
	}
	for _, c := range r.Checks {
		if c.On == routes.OnMember {
			reviewer = routes.OnMember
		}
	}
	home := plan.ControlPlane
	if reviewer == routes.OnMember {
		home = in.cluster
	}
	authn := w.userOn(ctx, id, home)
	switch r.Access {
	case routes.Public:
		// A credential the server cannot verify is refused (401) even
		// where none is needed; plain HTTP ignores it.
		return true, authn == nil && (id.token != "" || id.cert != nil) && !strings.HasPrefix(in.base, "http:")
	case routes.Certificate:
		return id.grpc != nil && slices.Contains(r.Callers, id.name), false
	}
	if authn == nil {
		return false, true
	}
	for _, c := range r.Checks {
		cluster, u := plan.ControlPlane, authn
		switch c.On {
		case routes.OnMember:
			cluster = in.cluster
		case routes.OnMemberForwarded:
			cluster, u = "member1", forwarded(authn)
		}
		c.Name = strings.ReplaceAll(c.Name, "{cluster}", "member1")
		if !w.allowed(ctx, cluster, u, c) {
			return false, false
		}
	}
	return true, false
}

// call sends one request and returns its status and the start of its body.
func (w *routeWalk) call(hc *http.Client, id walker, method, u, body string) (int, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, "", err
	}
	// The path exactly as written (curl --path-as-is).
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			p, _, _ := strings.Cut(u[i+3+j:], "?")
			req.URL.Opaque = "//" + u[i+3:i+3+j] + p
		}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if id.token != "" {
		req.Header.Set("Authorization", "Bearer "+id.token)
	}
	res, err := hc.Do(req)
	w.mu.Lock()
	w.requests++
	w.mu.Unlock()
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	// Read whole, so that the connection is kept (HTTP/1.1 closes one
	// whose body is left unread).
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

func refusal(code int) bool { return code == http.StatusUnauthorized || code == http.StatusForbidden }

// walkHTTP calls row r of in as id, in its own spelling and (for an
// identity it must refuse) in every other.
func (w *routeWalk) walkHTTP(ctx context.Context, in instance, r routes.Route, id walker, hc *http.Client) {
	t := w.t
	example := strings.ReplaceAll(r.Example, "{cluster}", "member1")
	allowed, may401 := w.expect(ctx, in, r, id)
	code, body, err := w.call(hc, id, r.Method, in.base+example, r.Body)
	what := fmt.Sprintf("%s %s (%s %s) %s %s as %s", in.cluster, in.server, in.listener, in.base, r.Method, example, id.name)
	switch {
	case err != nil:
		t.Errorf("%s: %v", what, err)
		return
	case r.Flag != "" && code == http.StatusNotFound:
		// Not served here: the server runs without r.Flag.
		return
	case allowed && may401 && code == http.StatusUnauthorized:
	case allowed && (refusal(code) || code == http.StatusBadRequest):
		t.Errorf("%s: answered %d %.200s; the table allows it", what, code, body)
	case !allowed && !refusal(code):
		t.Errorf("%s: answered %d %.200s; the table allows only %s", what, code, body, who(r))
	case !allowed && code == http.StatusForbidden && may401:
		t.Errorf("%s: answered 403; an identity the server cannot authenticate is answered 401", what)
	}
	if allowed {
		return
	}
	for _, s := range routes.Spellings(example) {
		code, body, err := w.call(hc, id, r.Method, in.base+s, r.Body)
		if err != nil {
			t.Errorf("%s spelled %s: %v", what, s, err)
			continue
		}
		if code < 300 {
			t.Errorf("%s spelled %s: answered %d %.200s; the route itself refuses it", what, s, code, body)
		}
	}
}

func who(r routes.Route) string {
	switch r.Access {
	case routes.AsCaller:
		var s []string
		for _, c := range r.Checks {
			s = append(s, c.String())
		}
		return "a caller who may " + strings.Join(s, " and ")
	case routes.Certificate:
		return strings.Join(r.Callers, ", ")
	}
	return string(r.Access)
}

// walkGRPC calls an estimator's method as id, and spellings of it.
func (w *routeWalk) walkGRPC(ctx context.Context, in instance, r routes.Route, id walker) {
	t := w.t
	tc := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // as walkHTTP
	if id.grpc != nil {
		tc.Certificates = []tls.Certificate{*id.grpc}
	} else if id.cert != nil {
		pair, err := tls.X509KeyPair(id.cert, id.key)
		if err != nil {
			t.Fatal(err)
		}
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	cc, err := grpc.NewClient(strings.TrimPrefix(in.base, "grpc://"), grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	allowed, _ := w.expect(ctx, in, r, id)
	invoke := func(method string) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		w.mu.Lock()
		w.requests++
		w.mu.Unlock()
		return cc.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{})
	}
	what := fmt.Sprintf("%s %s gRPC %s as %s", in.cluster, in.server, r.Example, id.name)
	// Served: an answer, or the method's own refusal of an empty request.
	served := func(err error) bool {
		return err == nil || status.Code(err) == codes.InvalidArgument
	}
	err = invoke(r.Example)
	if allowed && !served(err) {
		t.Errorf("%s: %v; the table allows it", what, err)
	}
	if !allowed && served(err) {
		t.Errorf("%s: served (%v); the table allows only %s", what, err, who(r))
	}
	for _, s := range []string{strings.ToLower(r.Example), r.Example + "/", "/" + r.Example, strings.Replace(r.Example, "/", "/./", 2)} {
		if err := invoke(s); served(err) {
			t.Errorf("%s spelled %s: served (%v)", what, s, err)
		}
	}
}

// wellKnown are paths a server could serve without a row: each is probed
// on every HTTP listener.
var wellKnown = []string{"/", "/metrics", "/metrics/slis", "/metrics/resources", "/healthz", "/readyz", "/livez", "/debug/pprof/", "/debug/pprof/heap",
	"/debug/pprof/profile?seconds=1", "/debug/flags/v", "/debug/vars", "/configz", "/flagz", "/statusz", "/version", "/openapi/v2", "/openapi/v3", "/apis", "/api",
	"/convert", "/validate-work", "/mutate-propagationpolicy", "/logs/", "/proxy/", "/swagger.json", "/swaggerapi", "/ui/"}

// TestRouteTable walks the route table (docs/security.md's) on the fleet.
func TestRouteTable(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	w := &routeWalk{t: t, admins: map[string]kubernetes.Interface{}, hosts: map[string]string{}, users: map[string]*user{}, reviews: map[string]bool{}}
	for _, c := range []string{plan.ControlPlane, "member1", "member2", "member3"} {
		context := c
		if c == plan.ControlPlane {
			context = plan.ControlPlaneContext
		}
		cfg := restConfig(t, context)
		w.hosts[c] = cfg.Host
		// Hundreds of reviews: not client-go's default 5 a second.
		cfg.QPS, cfg.Burst = 500, 1000
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.admins[c] = kc
	}
	w.walkers = walkers(ctx, t)
	ins := fleetInstances(t, w.hosts[plan.ControlPlane])
	rows := routes.Table()
	start := time.Now()

	// Every row, as every identity: each identity's calls to each listener
	// in a goroutine of their own, 16 at a time.
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for _, id := range w.walkers {
		hc := w.client(id)
		for _, in := range ins {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				for _, r := range rows {
					if r.Server != in.server || r.Listener != in.listener {
						continue
					}
					if in.listener == routes.GRPC {
						w.walkGRPC(ctx, in, r, id)
					} else {
						w.walkHTTP(ctx, in, r, id, hc)
					}
				}
			}()
		}
	}
	wg.Wait()
	t.Logf("%d requests as %d identities to %d listeners in %s", w.requests, len(w.walkers), len(ins), time.Since(start).Round(time.Millisecond))

	// No route without a row.
	administrator := w.walkers[slices.IndexFunc(w.walkers, func(id walker) bool { return id.name == "administrator" })]
	memberAdmins := map[string]walker{}
	for _, in := range ins {
		// (gRPC: the unit tests compare the rows with the service; the
		// karmada-apiserver's own routes are Kubernetes', its aggregated
		// ones are checked from discovery below.)
		if in.listener == routes.GRPC || in.server == "karmada-apiserver" {
			continue
		}
		// The administrator of the cluster that authorizes the listener
		// passes every authorization: any answer but 404 is a route.
		probe := administrator
		if in.cluster != plan.ControlPlane {
			if _, ok := memberAdmins[in.cluster]; !ok {
				memberAdmins[in.cluster] = memberAdmin(ctx, t, in.cluster)
			}
			probe = memberAdmins[in.cluster]
		}
		hc := w.client(probe)
		paths := slices.Clone(wellKnown)
		if in.server == "karmada-search" || in.server == "karmada-aggregated-apiserver" || in.server == "karmada-metrics-adapter" || in.server == "custom-metrics" {
			var index struct{ Paths []string }
			code, full, err := w.call(hc, probe, "GET", in.base+"/", "")
			if err != nil || code != http.StatusOK || json.Unmarshal([]byte(full), &index) != nil || len(index.Paths) == 0 {
				t.Fatalf("%s's list of paths: %d %v %.200s", in.server, code, err, full)
			}
			paths = append(paths, index.Paths...)
		}
		for _, p := range paths {
			code, body, err := w.call(hc, probe, "GET", in.base+p, "")
			if err != nil {
				t.Errorf("%s %s: GET %s: %v", in.cluster, in.server, p, err)
				continue
			}
			path, _, _ := strings.Cut(p, "?")
			if code == http.StatusNotFound {
				continue
			}
			if refusal(code) {
				t.Errorf("%s %s (%s): %s refused %s (%d %.100s): the probe cannot tell whether it is served", in.cluster, in.server, in.listener, probe.name, p, code, body)
				continue
			}
			if _, ok := routes.Find(rows, in.server, in.listener, path); !ok {
				t.Errorf("%s %s (%s) serves %s (%d %.100s), which no row of the route table lists", in.cluster, in.server, in.listener, p, code, body)
			}
		}
	}
	// Every resource the aggregated groups serve has rows.
	for _, gv := range []string{"search.karmada.io/v1alpha1", "cluster.karmada.io/v1alpha1", "metrics.k8s.io/v1beta1"} {
		list, err := w.admins[plan.ControlPlane].Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range list.APIResources {
			name, sub, _ := strings.Cut(res.Name, "/")
			prefix := "/apis/" + gv + "/" + name
			found := false
			for _, r := range rows {
				if r.Server != "karmada-apiserver" || !strings.HasPrefix(r.Path, prefix) {
					continue
				}
				rest := strings.TrimPrefix(r.Path, prefix)
				found = found || sub == "" && (rest == "" || strings.HasPrefix(rest, "/")) ||
					sub != "" && strings.HasPrefix(rest, "/") && slices.Contains(strings.Split(rest, "/"), sub)
			}
			if !found {
				t.Errorf("the karmada-apiserver serves %s %s (verbs %v), which no row of the route table lists", gv, res.Name, res.Verbs)
			}
		}
	}
}
