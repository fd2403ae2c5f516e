package routes

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"
)

// Every spelling that could mean another path to a proxy, a cache or a
// client library is refused; the paths Kubernetes clients send pass.
func TestCheckPath(t *testing.T) {
	for _, p := range []string{
		"/",
		"/api",
		"/apis/",
		"/api/v1/namespaces/default/pods",
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/namespaces/a.b/pods/web-1.x",
		"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/default/pods/p/exec",
		"/openapi/v3/apis/apps/v1",
		"/api/v1/namespaces/default/pods/a%3Ab",
		"/healthz",
	} {
		if err := CheckPath(p); err != nil {
			t.Errorf("%s: %v, want allowed", p, err)
		}
	}
	for p, why := range map[string]string{
		"":                           "must start with /",
		"api/v1":                     "must start with /",
		"/openapi/../api/v1/secrets": "dot segment",
		"/openapi/./v2":              "dot segment",
		"/api/v1/..":                 "dot segment",
		"/..":                        "dot segment",
		"/openapi/%2e%2e/api/v1":     "encoded dot",
		"/openapi/%2E./api":          "encoded dot",
		"/api%2fv1/secrets":          "encoded dot, slash",
		"/api%2Fv1":                  "encoded dot, slash",
		"/api/v1%5csecrets":          "encoded dot, slash, backslash",
		"/api/v1/%252e%252e":         "percent sign",
		"/api//v1":                   "empty segment",
		"//api/v1":                   "empty segment",
		"/api/v1//":                  "empty segment",
		"/api\\v1":                   "backslash",
		"/api/v1/pods/a%00":          "control character",
		"/api/v1/pods/a%0d%0a":       "control character",
		"/api/v1/pods/a%":            "incomplete",
		"/api/v1/pods/a%2":           "incomplete",
	} {
		err := CheckPath(p)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error naming %q", p, err, why)
		}
	}
}

// The filter answers 400 before the next handler sees the request, for the
// path as sent (RequestURI) and as decoded.
func TestRefuseUnsafePaths(t *testing.T) {
	reached := false
	h := RefuseUnsafePaths(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true }))
	for target, want := range map[string]int{
		"/api/v1/pods?labelSelector=a%3Db": http.StatusOK,
		"/api/v1/pods?x=../..":             http.StatusOK,
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/openapi/../api/v1/secrets": http.StatusBadRequest,
		"/apis/x/%2e%2e/y": http.StatusBadRequest,
		"/apis/x//y":       http.StatusBadRequest,
	} {
		reached = false
		r := httptest.NewRequest(http.MethodGet, "http://h"+target, nil)
		r.RequestURI = target
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want || reached != (want == http.StatusOK) {
			t.Errorf("%s: %d (next reached %t), want %d", target, w.Code, reached, want)
		}
		if want == http.StatusBadRequest && !strings.Contains(w.Body.String(), `"reason":"BadRequest"`) {
			t.Errorf("%s: body %s, want a Status of reason BadRequest", target, w.Body)
		}
	}
}

// FuzzCheckPath: a path CheckPath allows means the same to whoever
// decodes, cleans or splits it: decoding changes no separator, cleaning
// changes nothing but a trailing slash, and no segment climbs.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"/api/v1/pods", "/openapi/../api", "/a/%2e%2e/b", "/a//b", "/a/./b", "/a%2fb", "/", "/apis/", "/a%252e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if CheckPath(raw) != nil {
			return
		}
		dec, err := url.PathUnescape(raw)
		if err != nil {
			// Not valid escaping: a server refuses to parse it anyway.
			return
		}
		if strings.Count(dec, "/") != strings.Count(raw, "/") {
			t.Fatalf("%q decodes to %q: another number of segments", raw, dec)
		}
		if CheckPath(dec) != nil {
			t.Fatalf("%q allowed, but its decoded form %q is not", raw, dec)
		}
		cleaned := path.Clean(dec)
		if strings.HasSuffix(dec, "/") && cleaned != "/" {
			cleaned += "/"
		}
		if cleaned != dec {
			t.Fatalf("%q allowed, but cleaning %q gives %q", raw, dec, cleaned)
		}
	})
}
