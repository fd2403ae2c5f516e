package routes

import (
	"fmt"
	"slices"
	"strings"
)

// The attack surface as data: every route of every server we run, with who
// may call it. docs/security.md's route table is generated from Table
// (TestDocsTable), the route walk (test/e2e TestRouteTable) calls every row
// as every identity in every path spelling against a running fleet and
// fails on an answer the row does not allow, and on a route it finds that
// no row lists.

// Access is who may call a route.
type Access string

const (
	// Public routes answer anyone who can connect, without a credential.
	Public Access = "anyone who can connect"
	// AsCaller routes answer a caller whom the karmada-apiserver (or the
	// member named by the check) authenticates, when every Check allows
	// that caller: the server asks a SubjectAccessReview as the caller,
	// never acting with rights of its own.
	AsCaller Access = "the caller's own rights"
	// Certificate routes answer only a client certificate of the server's
	// client CA; Callers are the identities holding one.
	Certificate Access = "a client certificate of its CA"
)

// Listener is one port of a server.
type Listener string

const (
	// Serving is an API server's or the webhook's HTTPS port.
	Serving Listener = "serving"
	// Metrics is the HTTPS metrics port (--metrics-bind-address).
	Metrics Listener = "metrics"
	// Health is the plain HTTP probe port (--health-probe-bind-address).
	Health Listener = "health"
	// GRPC is an estimator's gRPC port.
	GRPC Listener = "grpc"
)

// Where a Check is asked.
const (
	// OnKarmada: the karmada-apiserver.
	OnKarmada = "karmada"
	// OnMember: the member the server runs for, the caller as that
	// member authenticates it.
	OnMember = "member"
	// OnMemberForwarded: the member named in the path, the caller as the
	// karmada-apiserver authenticated it (impersonated there).
	OnMemberForwarded = "member-forwarded"
)

// Check is one authorization a route asks, as a SubjectAccessReview's
// attributes.
type Check struct {
	// On is OnKarmada, OnMember or OnMemberForwarded.
	On string
	// Verb, Group, Resource, Subresource, Namespace and Name are a
	// resource request's attributes; NonResourceURL a non-resource one's.
	Verb, Group, Resource, Subresource, Namespace, Name string
	NonResourceURL                                      string
}

func (c Check) String() string {
	where := "karmada-apiserver"
	switch c.On {
	case OnMember:
		where = "the member"
	case OnMemberForwarded:
		where = "the member (as forwarded there)"
	}
	if c.NonResourceURL != "" {
		return fmt.Sprintf("%s %s in %s", c.Verb, c.NonResourceURL, where)
	}
	r := c.Resource
	if c.Group != "" {
		r += "." + c.Group
	}
	if c.Subresource != "" {
		r += "/" + c.Subresource
	}
	if c.Name != "" {
		r += " " + c.Name
	}
	if c.Namespace != "" {
		r += " in namespace " + c.Namespace
	}
	return fmt.Sprintf("%s %s in %s", c.Verb, r, where)
}

// Route is one row of the table.
type Route struct {
	// Server is the binary serving it (karmada-local status' names);
	// "karmada-apiserver" rows are the groups it serves through
	// aggregation, the rest of it being Kubernetes'.
	Server   string
	Listener Listener
	// Method is the HTTP method (POST for a gRPC method).
	Method string
	// Path is the route: literal segments, {name} for any one segment,
	// and a last "{path...}" for any rest (none included).
	Path string
	// Example is the path the walk calls ({cluster} is a member's name).
	Example string
	// Body is what the walk sends with a POST.
	Body string
	// Access is who may call it; Checks (AsCaller) are the authorizations
	// every one of which must allow the caller; Callers (Certificate) are
	// the identities holding a client certificate it accepts.
	Access  Access
	Checks  []Check
	Callers []string
	// Why says what it serves, for the docs.
	Why string
	// Flag, when set, is the flag without which the route is not served
	// (404 to everyone).
	Flag string
}

// Servers maps each server we run to its listeners, in the order
// karmada-local status lists its ports.
var Servers = map[string][]Listener{
	"karmada-webhook":              {Serving, Metrics},
	"karmada-aggregated-apiserver": {Serving},
	"karmada-search":               {Serving},
	"karmada-metrics-adapter":      {Serving},
	"karmada-controller-manager":   {Metrics, Health},
	"karmada-scheduler":            {Metrics, Health},
	"karmada-descheduler":          {Metrics, Health},
	"karmada-scheduler-estimator":  {GRPC, Health, Metrics},
	"karmada-agent":                {Metrics, Health},
	// karmada-local's custom metrics server in each push member of the
	// local fleet (karmada-local member-custom-metrics).
	"custom-metrics": {Serving},
}

// EstimatorService is the estimators' gRPC service (Karmada's name).
const EstimatorService = "github.com.karmada_io.karmada.pkg.estimator.service.Estimator"

// WebhookPaths are karmada-webhook's admission paths (Karmada's names); a
// unit test keeps them equal to what the webhook registers.
var WebhookPaths = []string{
	"/mutate-propagationpolicy", "/mutate-clusterpropagationpolicy", "/mutate-overridepolicy",
	"/mutate-resourcebinding", "/mutate-clusterresourcebinding", "/mutate-federatedhpa",
	"/validate-propagationpolicy", "/validate-clusterpropagationpolicy", "/validate-federatedresourcequota",
	"/validate-overridepolicy", "/validate-clusteroverridepolicy", "/validate-resourcebinding",
	"/validate-clusterresourcebinding", "/validate-work", "/validate-cluster",
	"/validate-resourceinterpretercustomization", "/validate-resourceinterpreterwebhookconfiguration",
	"/validate-clustertaintpolicy", "/validate-certificatesigningrequest-approval",
	"/validate-serviceimport", "/validate-multiclusterservice", "/validate-multiclusteringress",
	"/validate-federatedhpa", "/validate-cronfederatedhpa", "/validate-resourcedeletionprotection",
}

// EstimatorMethods are the estimators' gRPC methods.
var EstimatorMethods = []string{"MaxAvailableReplicas", "MaxAvailableComponentSets", "GetUnschedulableReplicas"}

func karmadaCheck(verb, group, resource, sub, ns, name string) Check {
	return Check{On: OnKarmada, Verb: verb, Group: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func nonResource(on, path string) Check {
	return Check{On: on, Verb: "get", NonResourceURL: path}
}

const (
	searchGV  = "/apis/search.karmada.io/v1alpha1"
	clusterGV = "/apis/cluster.karmada.io/v1alpha1"
	metricsGV = "/apis/metrics.k8s.io/v1beta1"
	// customMetricsGroup has two versions, both karmada-metrics-adapter's.
	customMetricsGroup = "/apis/custom.metrics.k8s.io"
)

// groupRoutes are the aggregated groups' routes, served by server (the
// karmada-apiserver through aggregation, and the backend itself).
func groupRoutes(server, gv string) []Route {
	row := func(path, example, why string, checks ...Check) Route {
		return Route{Server: server, Listener: Serving, Method: "GET", Path: path, Example: example, Access: AsCaller, Checks: checks, Why: why}
	}
	switch gv {
	case searchGV:
		// The karmada-apiserver authorizes the aggregated path first (the
		// search-user ClusterRole grants it to every authenticated user),
		// then karmada-search authorizes the read as the caller's.
		cache := karmadaCheck("get", "search.karmada.io", "search", "api", "", "cache")
		proxying := karmadaCheck("get", "search.karmada.io", "proxying", "proxy", "", "karmada")
		return []Route{
			row("/apis/search.karmada.io", "/apis/search.karmada.io", "discovery of the search group", nonResource(OnKarmada, "/apis/search.karmada.io")),
			row(gv, gv, "discovery of the search API", nonResource(OnKarmada, gv)),
			row(gv+"/resourceregistries", gv+"/resourceregistries", "ResourceRegistries (every verb, each authorized as the caller's)",
				karmadaCheck("list", "search.karmada.io", "resourceregistries", "", "", "")),
			row(gv+"/resourceregistries/{name}", gv+"/resourceregistries/e2e-absent", "one ResourceRegistry",
				karmadaCheck("get", "search.karmada.io", "resourceregistries", "", "", "e2e-absent")),
			row(gv+"/resourceregistries/{name}/status", gv+"/resourceregistries/e2e-absent/status", "a ResourceRegistry's status",
				karmadaCheck("get", "search.karmada.io", "resourceregistries", "status", "", "e2e-absent")),
			row(gv+"/search/cache/{path...}", gv+"/search/cache/api/v1/namespaces/karmada-cluster/secrets", "the cache of members' objects: what the caller may list or get in the karmada-apiserver",
				cache, karmadaCheck("list", "", "secrets", "", "karmada-cluster", "")),
			row(gv+"/proxying/karmada/proxy/{discovery}", gv+"/proxying/karmada/proxy/api", "the karmada-apiserver's discovery (exact discovery and OpenAPI paths only)", proxying),
			row(gv+"/proxying/karmada/proxy/{path...}", gv+"/proxying/karmada/proxy/api/v1/namespaces/karmada-cluster/secrets", "kubectl's server over the cache: reads as the caller's, writes through clusters/proxy as the caller",
				proxying, karmadaCheck("list", "", "secrets", "", "karmada-cluster", "")),
		}
	case metricsGV:
		// karmada-metrics-adapter: the members' metrics, each request
		// authorized as the caller's get or list of pods or nodes of
		// metrics.k8s.io (in the request's namespace) before any member is
		// asked with the adapter's member credentials.
		metric := func(verb, resource, ns, name string) Check {
			return karmadaCheck(verb, "metrics.k8s.io", resource, "", ns, name)
		}
		return []Route{
			row("/apis/metrics.k8s.io", "/apis/metrics.k8s.io", "discovery of the metrics group", nonResource(OnKarmada, "/apis/metrics.k8s.io")),
			row(gv, gv, "discovery of the metrics API", nonResource(OnKarmada, gv)),
			row(gv+"/pods", gv+"/pods", "every member's pod metrics, every namespace", metric("list", "pods", "", "")),
			row(gv+"/namespaces/{namespace}/pods", gv+"/namespaces/default/pods", "every member's pod metrics of a namespace", metric("list", "pods", "default", "")),
			row(gv+"/namespaces/{namespace}/pods/{name}", gv+"/namespaces/default/pods/e2e-absent", "one pod's metrics (409 when the name is in two members)",
				metric("get", "pods", "default", "e2e-absent")),
			row(gv+"/nodes", gv+"/nodes", "every member's node metrics", metric("list", "nodes", "", "")),
			row(gv+"/nodes/{name}", gv+"/nodes/e2e-absent", "one node's metrics", metric("get", "nodes", "", "e2e-absent")),
		}
	case customMetricsGroup:
		// karmada-metrics-adapter's custom.metrics.k8s.io (v1beta2 and
		// v1beta1), authorized by the karmada-apiserver.
		return customMetricsRoutes(server, OnKarmada)
	default:
		return []Route{
			row("/apis/cluster.karmada.io", "/apis/cluster.karmada.io", "discovery of the cluster group", nonResource(OnKarmada, "/apis/cluster.karmada.io")),
			row(gv, gv, "discovery of the cluster API", nonResource(OnKarmada, gv)),
			row(gv+"/clusters", gv+"/clusters", "Clusters (every verb, each authorized as the caller's)",
				karmadaCheck("list", "cluster.karmada.io", "clusters", "", "", "")),
			row(gv+"/clusters/{name}", gv+"/clusters/{cluster}", "one Cluster",
				karmadaCheck("get", "cluster.karmada.io", "clusters", "", "", "{cluster}")),
			row(gv+"/clusters/{name}/status", gv+"/clusters/{cluster}/status", "a Cluster's status",
				karmadaCheck("get", "cluster.karmada.io", "clusters", "status", "", "{cluster}")),
			row(gv+"/clusters/{name}/proxy/{path...}", gv+"/clusters/{cluster}/proxy/api/v1/namespaces/kube-system/secrets",
				"the member's API, as the caller impersonated there (every verb; exec, attach, port-forward)",
				karmadaCheck("get", "cluster.karmada.io", "clusters", "proxy", "", "{cluster}"),
				Check{On: OnMemberForwarded, Verb: "list", Resource: "secrets", Namespace: "kube-system"}),
		}
	}
}

// customMetricsRoutes are a custom.metrics.k8s.io server's routes (v1beta2
// and v1beta1): a metric of objects of a resource, authorized where on
// says as the caller's get of that resource of custom.metrics.k8s.io with
// the metric as subresource (as Kubernetes parses the path), in the
// request's namespace, before anything is read.
func customMetricsRoutes(server, on string) []Route {
	gv := customMetricsGroup
	row := func(path, example, why string, checks ...Check) Route {
		return Route{Server: server, Listener: Serving, Method: "GET", Path: path, Example: example, Access: AsCaller, Checks: checks, Why: why}
	}
	custom := func(resource, sub, ns, name string) Check {
		return Check{On: on, Verb: "get", Group: "custom.metrics.k8s.io", Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	out := []Route{row(gv, gv, "discovery of the custom metrics group", nonResource(on, gv))}
	for _, v := range []string{"v1beta2", "v1beta1"} {
		base := gv + "/" + v
		out = append(out,
			row(base, base, "discovery of the custom metrics API", nonResource(on, base)),
			row(base+"/namespaces/{namespace}/{resource}/{name}/{metric}", base+"/namespaces/default/pods/*/e2e-absent",
				"a metric of one object or, with the name *, of the objects a label selector picks",
				custom("pods", "e2e-absent", "default", "*")),
			row(base+"/namespaces/{name}/metrics/{metric}", base+"/namespaces/default/metrics/e2e-absent",
				"a metric of a namespace", custom("metrics", "", "default", "e2e-absent")),
			row(base+"/{resource}/{name}/{metric}", base+"/nodes/*/e2e-absent",
				"a metric of cluster-scoped objects", custom("nodes", "e2e-absent", "", "*")),
		)
	}
	return out
}

// genericRoutes are what k8s.io/apiserver serves beside an API, each
// authorized by the karmada-apiserver.
func genericRoutes(server string) []Route { return genericRoutesOn(server, OnKarmada) }

// genericRoutesOn are genericRoutes authorized where on says.
func genericRoutesOn(server, on string) []Route {
	public := func(path, example, why string) Route {
		return Route{Server: server, Listener: Serving, Method: "GET", Path: path, Example: example, Access: Public, Why: why}
	}
	asCaller := func(path, example, why string) Route {
		return Route{Server: server, Listener: Serving, Method: "GET", Path: path, Example: example, Access: AsCaller,
			Checks: []Check{nonResource(on, example)}, Why: why}
	}
	return []Route{
		asCaller("/", "/", "the list of paths"),
		asCaller("/apis", "/apis", "discovery"),
		public("/healthz", "/healthz", "health, each check's name only"),
		asCaller("/healthz/{check...}", "/healthz/ping", "one health check"),
		public("/livez", "/livez", "liveness"),
		asCaller("/livez/{check...}", "/livez/ping", "one liveness check"),
		public("/readyz", "/readyz", "readiness"),
		asCaller("/readyz/{check...}", "/readyz/ping", "one readiness check"),
		asCaller("/metrics", "/metrics", "Prometheus metrics"),
		asCaller("/metrics/slis", "/metrics/slis", "health checks as metrics"),
		asCaller("/openapi/v2", "/openapi/v2", "OpenAPI v2 of its API"),
		asCaller("/openapi/v3", "/openapi/v3", "OpenAPI v3 index"),
		asCaller("/openapi/v3/", "/openapi/v3/", "OpenAPI v3 index"),
		asCaller("/openapi/v3/{path...}", "/openapi/v3/apis/"+strings.TrimPrefix(apiOf(server), "/apis/"), "OpenAPI v3 of its group"),
		asCaller("/version", "/version", "the build's version"),
	}
}

func apiOf(server string) string {
	switch server {
	case "karmada-search":
		return searchGV
	case "karmada-metrics-adapter":
		return metricsGV
	case "custom-metrics":
		return customMetricsGroup + "/v1beta2"
	}
	return clusterGV
}

// metricsRoutes are a component's metrics listener's routes; reviewer is
// where its requests are authorized.
func metricsRoutes(server, reviewer string) []Route {
	rows := []Route{{Server: server, Listener: Metrics, Method: "GET", Path: "/metrics", Example: "/metrics", Access: AsCaller,
		Checks: []Check{nonResource(reviewer, "/metrics")}, Why: "Prometheus metrics"}}
	for _, p := range []string{"/healthz", "/readyz", "/livez"} {
		rows = append(rows, Route{Server: server, Listener: Metrics, Method: "GET", Path: p, Example: p, Access: Public, Why: "health over TLS, no detail"})
	}
	{
		for _, p := range []string{"/debug/pprof/", "/debug/pprof/{profile}"} {
			example := strings.ReplaceAll(p, "{profile}", "heap")
			rows = append(rows, Route{Server: server, Listener: Metrics, Method: "GET", Path: p, Example: example, Access: AsCaller,
				Checks: []Check{nonResource(reviewer, example)}, Flag: "--enable-pprof",
				Why: "profiles, with --enable-pprof (karmada-local up gives it to the control plane's components)"})
		}
	}
	return rows
}

// healthRoutes are a component's plain HTTP probe listener's routes.
func healthRoutes(server string) []Route {
	var rows []Route
	for _, p := range []string{"/healthz", "/readyz"} {
		rows = append(rows,
			Route{Server: server, Listener: Health, Method: "GET", Path: p, Example: p, Access: Public, Why: "the kubelet's probe"},
			Route{Server: server, Listener: Health, Method: "GET", Path: p + "/{check...}", Example: p + "/ping", Access: Public, Why: "one check"})
	}
	return rows
}

// Table is every route of every server we run.
func Table() []Route {
	var rows []Route
	rows = append(rows, groupRoutes("karmada-apiserver", searchGV)...)
	rows = append(rows, groupRoutes("karmada-apiserver", clusterGV)...)
	rows = append(rows, groupRoutes("karmada-search", searchGV)...)
	rows = append(rows, genericRoutes("karmada-search")...)
	rows = append(rows, groupRoutes("karmada-aggregated-apiserver", clusterGV)...)
	rows = append(rows, genericRoutes("karmada-aggregated-apiserver")...)
	rows = append(rows, groupRoutes("karmada-apiserver", metricsGV)...)
	rows = append(rows, groupRoutes("karmada-metrics-adapter", metricsGV)...)
	rows = append(rows, groupRoutes("karmada-apiserver", customMetricsGroup)...)
	rows = append(rows, groupRoutes("karmada-metrics-adapter", customMetricsGroup)...)
	rows = append(rows, customMetricsRoutes("custom-metrics", OnMember)...)
	rows = append(rows, genericRoutesOn("custom-metrics", OnMember)...)
	rows = append(rows, genericRoutes("karmada-metrics-adapter")...)
	const review = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"e2e-route-walk","operation":"CREATE"}}`
	for _, p := range WebhookPaths {
		rows = append(rows, Route{Server: "karmada-webhook", Listener: Serving, Method: "POST", Path: p, Example: p, Body: review, Access: Public,
			Why: "an admission review (the karmada-apiserver calls it)"})
	}
	rows = append(rows, Route{Server: "karmada-webhook", Listener: Serving, Method: "POST", Path: "/convert", Example: "/convert",
		Body:   `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"e2e-route-walk","desiredAPIVersion":"work.karmada.io/v1alpha2","objects":[]}}`,
		Access: Public, Why: "conversion of bindings (the karmada-apiserver calls it)"})
	rows = append(rows, Route{Server: "karmada-webhook", Listener: Serving, Method: "POST", Path: "/authorize-controller-manager", Example: "/authorize-controller-manager",
		Body:   `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"system:karmada:karmada-controller-manager","resourceAttributes":{"verb":"update","group":"apps","resource":"deployments"}}}`,
		Access: Public, Why: "the karmada-apiserver's authorization webhook: denies the controller manager's writes to admission configuration, APIServices, API Priority and Fairness and interpreter configuration, no opinion on anything else"})
	for _, p := range []string{"/healthz", "/readyz"} {
		rows = append(rows, Route{Server: "karmada-webhook", Listener: Serving, Method: "GET", Path: p, Example: p, Access: Public, Why: "health"})
	}
	rows = append(rows, metricsRoutes("karmada-webhook", OnKarmada)...)
	for _, s := range []string{"karmada-controller-manager", "karmada-scheduler", "karmada-descheduler"} {
		rows = append(rows, metricsRoutes(s, OnKarmada)...)
		rows = append(rows, healthRoutes(s)...)
	}
	rows = append(rows, metricsRoutes("karmada-agent", OnMember)...)
	rows = append(rows, healthRoutes("karmada-agent")...)
	for _, m := range EstimatorMethods {
		p := "/" + EstimatorService + "/" + m
		rows = append(rows, Route{Server: "karmada-scheduler-estimator", Listener: GRPC, Method: "POST", Path: p, Example: p, Access: Certificate,
			Callers: []string{"karmada-scheduler", "karmada-descheduler"}, Why: "capacity estimates of its member"})
	}
	rows = append(rows, metricsRoutes("karmada-scheduler-estimator", OnMember)...)
	rows = append(rows, healthRoutes("karmada-scheduler-estimator")...)
	return rows
}

// Matches reports whether path is the route's (its pattern's segments,
// {x} any one non-empty segment, a last {x...} any non-empty rest).
func (r Route) Matches(path string) bool {
	return match(strings.Split(strings.TrimPrefix(r.Path, "/"), "/"), strings.Split(strings.TrimPrefix(path, "/"), "/"))
}

func match(pattern, segs []string) bool {
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "...}") {
			return i < len(segs) && !slices.Contains(segs[i:], "")
		}
		if i >= len(segs) {
			return false
		}
		if strings.HasPrefix(p, "{") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if p != segs[i] {
			return false
		}
	}
	return len(pattern) == len(segs)
}

// Find is the row of server's listener serving path, or false.
func Find(rows []Route, server string, l Listener, path string) (Route, bool) {
	for _, r := range rows {
		if r.Server == server && r.Listener == l && r.Matches(path) {
			return r, true
		}
	}
	return Route{}, false
}

// Markdown is the table as docs/security.md shows it.
func Markdown(rows []Route) string {
	var b strings.Builder
	b.WriteString("| server | port | method | route | who may call | what |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		who := string(r.Access)
		switch r.Access {
		case AsCaller:
			var checks []string
			for _, c := range r.Checks {
				checks = append(checks, c.String())
			}
			who = "a caller who may " + strings.Join(checks, ", and ")
		case Certificate:
			who = "a client certificate of its CA: " + strings.Join(r.Callers, ", ")
		}
		why := r.Why
		if r.Flag != "" && !strings.Contains(why, r.Flag) {
			why += " (with " + r.Flag + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s | %s |\n", r.Server, r.Listener, r.Method, r.Path, who, why)
	}
	return b.String()
}

// Spellings are other spellings of path (a walked route's Example) that a
// server, a proxy or a client library could read as it, or as a path
// beside it: a trailing slash, upper case, doubled slashes, dot segments
// (plain, and after a segment a server might let through unauthorized:
// healthz, openapi, version), their encoded forms, and an encoded letter.
// No spelling may get an answer the route itself would not give.
func Spellings(path string) []string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	out := short(path, segs)
	// The two that once read Secrets through karmada-search, at every
	// boundary; the rest after the first segment, the middle one and the
	// one before the last.
	for b := range segs {
		out = append(out, insert(segs, b, "openapi/v2/../../"), insert(segs, b, "x/../"))
	}
	for _, b := range []int{0, len(segs) / 2, len(segs) - 1} {
		for _, in := range []string{"./", "healthz/../", "version/../", "x/%2e%2e/", "x/%2E%2E/", "x/..%2f", "x%2f..%2f", "x%5c..%5c", "./../" + segOr(segs, b-1) + "/", "/"} {
			out = append(out, insert(segs, b, in))
		}
	}
	slices.Sort(out)
	return slices.DeleteFunc(slices.Compact(out), func(s string) bool { return s == path })
}

func short(path string, segs []string) []string {
	var out []string
	if !strings.HasSuffix(path, "/") {
		out = append(out, path+"/")
	}
	if up := strings.ToUpper(path); up != path {
		out = append(out, up)
	}
	mid := len(segs) / 2
	out = append(out, "/"+path, insert(segs, mid, "/"), insert(segs, mid, "openapi/v2/../../"), insert(segs, mid, "x/%2e%2e/"))
	// A letter percent-encoded: the same path to every decoder.
	for i := len(path) - 1; i >= 0; i-- {
		if c := path[i]; c >= 'a' && c <= 'z' {
			out = append(out, path[:i]+fmt.Sprintf("%%%02x", c)+path[i+1:])
			break
		}
	}
	return out
}

// insert is the path of segs with in inserted before segment b.
func insert(segs []string, b int, in string) string {
	before := strings.Join(segs[:b], "/")
	if before != "" {
		before += "/"
	}
	return "/" + before + in + strings.Join(segs[b:], "/")
}

// segOr is segs[i], or "." before the first.
func segOr(segs []string, i int) string {
	if i < 0 {
		return "."
	}
	return segs[i]
}
