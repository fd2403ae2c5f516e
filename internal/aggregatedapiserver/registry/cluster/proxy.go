package cluster

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/join"
)

// Connection is how the proxy reaches one member: its API server, a
// transport that trusts it (through the Cluster's proxyURL when set), and
// the impersonator's token, the only credential sent.
type Connection struct {
	Endpoint  *url.URL
	Transport http.RoundTripper
	Token     string
}

// Dialer finds how to reach a Cluster's member.
type Dialer interface {
	Dial(ctx context.Context, c *clusterv1alpha1.Cluster) (*Connection, error)
}

// ProxyREST is the proxy subresource: clusters/<name>/proxy/<path> goes to
// <path> in the member's API, as the caller: the member sees the caller's
// user, groups and extra through impersonation by the Cluster's
// impersonator, never the caller's own credentials. Whether the caller may
// proxy at all is RBAC on clusters/proxy in the control plane; what it may
// do in the member is the member's RBAC for that user.
type ProxyREST struct {
	clusters rest.Getter
	dialer   Dialer
}

// NewProxyREST is the proxy of the Clusters clusters gets.
func NewProxyREST(clusters rest.Getter, dialer Dialer) *ProxyREST {
	return &ProxyREST{clusters: clusters, dialer: dialer}
}

var _ rest.Connecter = &ProxyREST{}

// proxyMethods are every method a member's API serves.
var proxyMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// New is the proxy's options.
func (r *ProxyREST) New() runtime.Object { return &clusterv1alpha1.ClusterProxyOptions{} }

// Destroy: nothing of its own to release.
func (r *ProxyREST) Destroy() {}

// NewConnectOptions: the path below proxy/ is the options' path.
func (r *ProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &clusterv1alpha1.ClusterProxyOptions{}, true, "path"
}

// ConnectMethods are every method.
func (r *ProxyREST) ConnectMethods() []string { return proxyMethods }

// Connect returns the handler of one proxied request.
func (r *ProxyREST) Connect(ctx context.Context, name string, options runtime.Object, responder rest.Responder) (http.Handler, error) {
	opts, ok := options.(*clusterv1alpha1.ClusterProxyOptions)
	if !ok {
		return nil, apierrors.NewBadRequest("invalid options of the proxy")
	}
	caller, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewUnauthorized("no user in the request")
	}
	// From the watch cache (resourceVersion 0), not a quorum read of etcd
	// at every proxied request: a Cluster's endpoint and secrets change
	// rarely, and the Secrets come from an informer anyway.
	obj, err := r.clusters.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	c := obj.(*clusterv1alpha1.Cluster)
	conn, err := r.dialer.Dial(ctx, c)
	if err != nil {
		return nil, err
	}
	location := Location(conn.Endpoint, opts.Path)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// The query is the member's (exec's command and streams among
		// it): the upgrade path of the handler sends its location as is.
		loc := *location
		loc.RawQuery = req.URL.RawQuery
		req.Header = ForwardHeaders(req.Header, caller, conn.Token)
		proxy.NewUpgradeAwareHandler(&loc, conn.Transport, false, false, errorResponder{responder}).ServeHTTP(w, req)
	}), nil
}

// Location is the member URL of a proxied path: the endpoint's path, then
// the request's (a trailing slash kept).
func Location(endpoint *url.URL, p string) *url.URL {
	loc := *endpoint
	// p is cleaned on its own first: ".." never climbs out of the
	// endpoint's path.
	joined := path.Join("/", loc.Path, path.Clean("/"+p))
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(joined, "/") {
		joined += "/"
	}
	loc.Path = joined
	loc.RawPath = ""
	loc.RawQuery = ""
	return &loc
}

// droppedHeaders are never forwarded to a member: the caller's own
// credentials, any identity it claims, and the front proxy's headers.
var droppedHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// droppedPrefixes are header prefixes never forwarded.
var droppedPrefixes = []string{"Impersonate-", "X-Remote-"}

// ForwardHeaders is what a member receives: the request's headers without
// any credential or claimed identity of the caller's, plus the
// impersonator's token and the authenticated caller as who to act as.
// (Hop-by-hop headers are the reverse proxy's to drop; the upgrade of an
// exec or attach keeps Connection and Upgrade.)
func ForwardHeaders(in http.Header, caller user.Info, token string) http.Header {
	out := make(http.Header, len(in)+4)
	for k, v := range in {
		ck := http.CanonicalHeaderKey(k)
		drop := false
		for _, d := range droppedHeaders {
			drop = drop || ck == d
		}
		for _, p := range droppedPrefixes {
			drop = drop || strings.HasPrefix(ck, p)
		}
		if !drop {
			out[ck] = append([]string(nil), v...)
		}
	}
	out.Set("Authorization", "Bearer "+token)
	out.Set("Impersonate-User", caller.GetName())
	// Never system:masters (whoever is an administrator of the control
	// plane is, in a member, who the member's RBAC says), nor the groups
	// the member adds itself.
	for _, g := range join.ForwardedGroups(caller) {
		out.Add("Impersonate-Group", g)
	}
	if uid := caller.GetUID(); uid != "" {
		out.Set("Impersonate-Uid", uid)
	}
	for k, vs := range caller.GetExtra() {
		key := "Impersonate-Extra-" + url.PathEscape(k)
		for _, v := range vs {
			out.Add(key, v)
		}
	}
	return out
}

// errorResponder writes a proxy error as an API status.
type errorResponder struct{ r rest.Responder }

func (e errorResponder) Error(_ http.ResponseWriter, _ *http.Request, err error) {
	e.r.Error(apierrors.NewServiceUnavailable("the member cluster could not be reached: " + err.Error()))
}
