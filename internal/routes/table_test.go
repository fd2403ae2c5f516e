package routes_test

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/routes"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
	"github.com/karmada-go/karmada/internal/webhook"
)

// The webhook's table rows are the paths it registers: a new endpoint
// without a row fails here.
func TestWebhookPathsAreTheTables(t *testing.T) {
	var registered []string
	for _, e := range webhook.Endpoints(scheme.Scheme) {
		registered = append(registered, e.Path)
	}
	slices.Sort(registered)
	listed := slices.Clone(routes.WebhookPaths)
	slices.Sort(listed)
	if !slices.Equal(registered, listed) {
		t.Errorf("karmada-webhook registers %v; the route table lists %v", registered, listed)
	}
	rows := routes.Table()
	for _, p := range append(registered, webhook.ConvertPath, webhook.ConfinementPath) {
		if _, ok := routes.Find(rows, "karmada-webhook", routes.Serving, p); !ok {
			t.Errorf("no row for karmada-webhook's %s", p)
		}
	}
}

// The estimators' rows are the gRPC service's methods.
func TestEstimatorMethodsAreTheTables(t *testing.T) {
	if service.Estimator_ServiceDesc.ServiceName != routes.EstimatorService {
		t.Errorf("service %s; the table says %s", service.Estimator_ServiceDesc.ServiceName, routes.EstimatorService)
	}
	if len(service.Estimator_ServiceDesc.Streams) != 0 {
		t.Errorf("the estimator serves streams the table does not list: %v", service.Estimator_ServiceDesc.Streams)
	}
	var methods []string
	for _, m := range service.Estimator_ServiceDesc.Methods {
		methods = append(methods, m.MethodName)
		if _, ok := routes.Find(routes.Table(), "karmada-scheduler-estimator", routes.GRPC, "/"+routes.EstimatorService+"/"+m.MethodName); !ok {
			t.Errorf("no row for the estimator's %s", m.MethodName)
		}
	}
	if !slices.Equal(methods, routes.EstimatorMethods) {
		t.Errorf("the estimator serves %v; the table lists %v", methods, routes.EstimatorMethods)
	}
}

// Every row is well formed: its server and listener are known, its example
// is its own route (and no earlier row's), its access says who.
func TestRowsAreWellFormed(t *testing.T) {
	rows := routes.Table()
	seen := map[string]bool{}
	for i, r := range rows {
		name := r.Server + " " + string(r.Listener) + " " + r.Path
		if seen[name] {
			t.Errorf("%s: listed twice", name)
		}
		seen[name] = true
		if r.Server != "karmada-apiserver" && !slices.Contains(routes.Servers[r.Server], r.Listener) {
			t.Errorf("%s: %s has no %s listener", name, r.Server, r.Listener)
		}
		example := strings.ReplaceAll(r.Example, "{cluster}", "member1")
		if got, ok := routes.Find(rows, r.Server, r.Listener, example); !ok || got.Path != r.Path {
			t.Errorf("%s: its example %s is found as %q", name, example, got.Path)
		}
		if err := routes.CheckPath(example); err != nil {
			t.Errorf("%s: its example is refused by the path rule: %v", name, err)
		}
		switch r.Access {
		case routes.Public:
		case routes.AsCaller:
			if len(r.Checks) == 0 {
				t.Errorf("%s: answers the caller's own rights but checks none", name)
			}
		case routes.Certificate:
			if len(r.Callers) == 0 {
				t.Errorf("%s: a certificate nobody holds", name)
			}
		default:
			t.Errorf("row %d %s: access %q", i, name, r.Access)
		}
		if r.Why == "" || r.Method == "" {
			t.Errorf("%s: no method or no description", name)
		}
	}
	for s, ls := range routes.Servers {
		for _, l := range ls {
			found := false
			for _, r := range rows {
				found = found || r.Server == s && r.Listener == l
			}
			if !found {
				t.Errorf("%s's %s listener has no row", s, l)
			}
		}
	}
}

func TestMatches(t *testing.T) {
	r := routes.Route{Path: "/apis/g/v/clusters/{name}/proxy/{path...}"}
	for p, want := range map[string]bool{
		"/apis/g/v/clusters/m1/proxy/api":       true,
		"/apis/g/v/clusters/m1/proxy/api/v1/x":  true,
		"/apis/g/v/clusters/m1/proxy":           false,
		"/apis/g/v/clusters/m1/proxy/":          false,
		"/apis/g/v/clusters//proxy/api":         false,
		"/apis/g/v/clusters/m1/proxy/api//v1":   false,
		"/apis/g/v/clusters/m1/status":          false,
		"/apis/g/v/clusters/m1/proxy/api/v1/x/": false,
	} {
		if got := r.Matches(p); got != want {
			t.Errorf("%s matches %s: %v, want %v", r.Path, p, got, want)
		}
	}
	if !(routes.Route{Path: "/"}).Matches("/") || (routes.Route{Path: "/"}).Matches("/x") {
		t.Error("/ matches only itself")
	}
}

// Every spelling the walk sends is another path than the route's; those
// with a dot segment, an encoded separator or an empty segment are refused
// by the path rule of our API servers, and the rest decode to the route
// itself or differ only in case or a trailing slash.
func TestSpellings(t *testing.T) {
	const p = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/secrets"
	got := routes.Spellings(p)
	if len(got) < 20 {
		t.Fatalf("only %d spellings: %v", len(got), got)
	}
	refused := 0
	for _, s := range got {
		if s == p {
			t.Errorf("the route itself among its spellings")
		}
		if routes.CheckPath(s) != nil {
			refused++
			continue
		}
		decoded, err := url.PathUnescape(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		if decoded != p && !strings.EqualFold(decoded, p) && decoded != p+"/" {
			t.Errorf("%s passes the path rule and decodes to %s", s, decoded)
		}
	}
	if refused < len(got)-3 {
		t.Errorf("%d of %d spellings refused by the path rule: %v", refused, len(got), got)
	}

	for _, s := range []string{"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/openapi/v2/../../api/v1/secrets",
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/x/%2e%2e/secrets"} {
		if !slices.Contains(got, s) {
			t.Errorf("%s not among the spellings", s)
		}
	}
}

// docs/security.md's route table is Markdown(Table()); UPDATE_DOCS=1
// rewrites it.
func TestDocsTable(t *testing.T) {
	const begin, end = "<!-- route table: generated by TestDocsTable, UPDATE_DOCS=1 go test ./internal/routes -->\n", "<!-- end of the route table -->\n"
	path := filepath.Join(testenv.RepoRoot(), "docs", "security.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no route table between %q and %q", path, begin, end)
	}
	want := routes.Markdown(routes.Table())
	if doc[i+len(begin):j] == want {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "" {
		t.Fatalf("%s's route table is not the code's: run UPDATE_DOCS=1 go test ./internal/routes -run TestDocsTable", path)
	}
	if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzMatches: a route pattern matches only paths of its own length (or
// longer, through a last {x...}), never one with an empty segment in a
// parameter, and every literal segment of the pattern is the path's; and a
// spelling of a path is never the path.
func FuzzMatches(f *testing.F) {
	f.Add("/apis/g/v/clusters/{name}/proxy/{path...}", "/apis/g/v/clusters/m1/proxy/api/v1")
	f.Add("/healthz", "/healthz/")
	f.Add("/", "/")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if !strings.HasPrefix(pattern, "/") || !strings.HasPrefix(path, "/") {
			return
		}
		r := routes.Route{Path: pattern}
		if !r.Matches(path) {
			return
		}
		ps := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
		ss := strings.Split(strings.TrimPrefix(path, "/"), "/")
		rest := len(ps) > 0 && strings.HasPrefix(ps[len(ps)-1], "{") && strings.HasSuffix(ps[len(ps)-1], "...}")
		if !rest && len(ps) != len(ss) || rest && len(ss) < len(ps) {
			t.Fatalf("%s matches %s of another length", pattern, path)
		}
		for i, p := range ps {
			switch {
			case strings.HasPrefix(p, "{"):
				if ss[i] == "" {
					t.Fatalf("%s matches %s with an empty parameter", pattern, path)
				}
			case p != ss[i]:
				t.Fatalf("%s matches %s: segment %q is %q", pattern, path, p, ss[i])
			}
		}
		for _, s := range routes.Spellings(path) {
			if s == path {
				t.Fatalf("%s among its own spellings", path)
			}
		}
	})
}
