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
	"os"
	"path/filepath"
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
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	authuser "k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/localup"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
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
	if in.cluster != localup.ControlPlane {
		reviewer = routes.OnMember
	}
	for _, c := range r.Checks {
		if c.On == routes.OnMember {
			reviewer = routes.OnMember
		}
	}
	home := localup.ControlPlane
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
		cluster, u := localup.ControlPlane, authn
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

// fleetInstances are the listeners of every server of ours that the fleet
// runs, from karmada-local status; a Karmada server without rows fails.
func fleetInstances(t *testing.T, karmadaHost string) []instance {
	out, err := karmadaLocal("status", "-o", "json")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var statuses []localup.ComponentStatus
	if err := json.Unmarshal([]byte(out), &statuses); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	ins := []instance{{server: "karmada-apiserver", cluster: localup.ControlPlane, listener: routes.Serving, base: karmadaHost}}
	for _, s := range statuses {
		cluster, server, _ := strings.Cut(s.Name, "/")
		listeners, ours := routes.Servers[server]
		if !ours {
			if strings.HasPrefix(server, "karmada") {
				t.Errorf("%s is a server of ours the route table does not list (internal/routes Servers)", s.Name)
			}
			continue
		}
		if len(listeners) != len(s.Ports) {
			t.Errorf("%s listens on %v; the route table knows %v", s.Name, s.Ports, listeners)
			continue
		}
		for i, l := range listeners {
			scheme := "https"
			switch l {
			case routes.Health:
				scheme = "http"
			case routes.GRPC:
				scheme = "grpc"
			}
			ins = append(ins, instance{server: server, cluster: cluster, listener: l, base: fmt.Sprintf("%s://127.0.0.1:%d", scheme, s.Ports[i])})
		}
	}
	return ins
}

// walkers are the identities of the walk.
func walkers(ctx context.Context, t *testing.T) []walker {
	state := fleet.stateDir
	read := func(p ...string) []byte {
		b, err := os.ReadFile(filepath.Join(p...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A kubeconfig's credentials, inline or in the files it names.
	fromKubeconfig := func(name string, b []byte) walker {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
		if err == nil {
			err = rest.LoadTLSFiles(cfg)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return walker{name: name, token: cfg.BearerToken, cert: cfg.CertData, key: cfg.KeyData}
	}
	fromFile := func(name string, p ...string) walker { return fromKubeconfig(name, read(p...)) }
	ws := []walker{{name: "anonymous"}, {name: "bootstrap token", token: bootstrapToken(t).BearerToken}}

	// A tenant: a service account with rights in its namespace only.
	admin := kube(t, "karmada-apiserver")
	ns := "e2e-routes-" + utilrand.String(5)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "tenant", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws = append(ws, walker{name: "tenant", token: tr.Status.Token})

	s, err := kube(t, "member3").CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws = append(ws, fromKubeconfig("member3's agent", s.Data[agentcert.SecretKey]))
	for _, n := range []string{"member1", "member1-impersonator"} {
		sec, err := admin.CoreV1().Secrets("karmada-cluster").Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, walker{name: "secret karmada-cluster/" + n, token: string(sec.Data["token"])})
	}
	for _, c := range []string{"karmada-controller-manager", "karmada-scheduler", "karmada-descheduler", "karmada-search", "karmada-aggregated-apiserver", "karmada-webhook"} {
		w := fromFile(c, state, "karmada", c+".kubeconfig")
		if c == "karmada-scheduler" || c == "karmada-descheduler" {
			pair, err := tls.X509KeyPair(read(state, "estimator", "pki", c+"-client.crt"), read(state, "estimator", "pki", c+"-client.key"))
			if err != nil {
				t.Fatal(err)
			}
			w.grpc = &pair
		}
		ws = append(ws, w)
	}
	ws = append(ws, fromFile("administrator", state, "karmada", "admin.kubeconfig"),
		fromFile("member1's administrator", state, "member1", "admin.kubeconfig"))
	for _, w := range ws {
		if w.token == "" && w.cert == nil && w.name != "anonymous" {
			t.Fatalf("%s has no credential", w.name)
		}
	}
	return ws
}

// wellKnown are paths a server could serve without a row: each is probed
// on every HTTP listener.
var wellKnown = []string{"/", "/metrics", "/metrics/slis", "/metrics/resources", "/healthz", "/readyz", "/livez", "/debug/pprof/", "/debug/pprof/heap",
	"/debug/pprof/profile?seconds=1", "/debug/flags/v", "/debug/vars", "/configz", "/flagz", "/statusz", "/version", "/openapi/v2", "/openapi/v3", "/apis", "/api",
	"/convert", "/validate-work", "/mutate-propagationpolicy", "/logs/", "/proxy/", "/swagger.json", "/swaggerapi", "/ui/"}

// TestRouteTable walks the route table (docs/security.md's) on the fleet.
func TestRouteTable(t *testing.T) {
	ctx := context.Background()
	w := &routeWalk{t: t, admins: map[string]kubernetes.Interface{}, hosts: map[string]string{}, users: map[string]*user{}, reviews: map[string]bool{}}
	for _, c := range []string{localup.ControlPlane, "member1", "member2", "member3"} {
		context := c
		if c == localup.ControlPlane {
			context = localup.ControlPlaneContext
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
	ins := fleetInstances(t, w.hosts[localup.ControlPlane])
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
		if in.cluster != localup.ControlPlane {
			if _, ok := memberAdmins[in.cluster]; !ok {
				memberAdmins[in.cluster] = memberAdmin(ctx, t, in.cluster)
			}
			probe = memberAdmins[in.cluster]
		}
		hc := w.client(probe)
		paths := slices.Clone(wellKnown)
		if in.server == "karmada-search" || in.server == "karmada-aggregated-apiserver" {
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
	for _, gv := range []string{"search.karmada.io/v1alpha1", "cluster.karmada.io/v1alpha1"} {
		list, err := w.admins[localup.ControlPlane].Discovery().ServerResourcesForGroupVersion(gv)
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

// memberAdmin is a token of a service account bound to cluster-admin in
// member (a component's metrics there may take tokens only), removed with
// the test.
func memberAdmin(ctx context.Context, t *testing.T, member string) walker {
	t.Helper()
	kc := kube(t, member)
	name := "e2e-route-probe"
	if _, err := kc.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = kc.CoreV1().ServiceAccounts("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	tr, err := kc.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return walker{name: member + "'s administrator", token: tr.Status.Token}
}
