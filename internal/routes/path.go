// Package routes is the attack surface of the servers we run, as data and
// as the checks every one of them applies before routing: the path rule
// (CheckPath, RefuseUnsafePaths) that keeps a caller's path from meaning
// one thing to the authorizer and another to what forwards it.
package routes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CheckPath refuses a request path that a proxy, a cache or a client
// library could read as another: a dot segment ("." or ".."), an empty
// segment ("//"; a single trailing slash is allowed), a backslash, an
// encoded dot, slash, backslash or percent sign (%2e, %2f, %5c, %25), an
// encoded NUL or control character, and anything not starting with "/".
// raw is the path as the client sent it (escaped, without the query).
// Kubernetes names never need any of these, and client-go never sends
// them.
func CheckPath(raw string) error {
	if raw == "" || raw[0] != '/' {
		return fmt.Errorf("path %q: must start with /", raw)
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\':
			return fmt.Errorf("path %q: a backslash is not allowed", raw)
		case c < 0x20 || c == 0x7f:
			return fmt.Errorf("path %q: a control character is not allowed", raw)
		case c == '%':
			if i+2 >= len(raw) {
				return fmt.Errorf("path %q: an incomplete percent-encoding", raw)
			}
			hex := strings.ToLower(raw[i+1 : i+3])
			switch {
			case hex == "2e" || hex == "2f" || hex == "5c" || hex == "25":
				return fmt.Errorf("path %q: an encoded dot, slash, backslash or percent sign (%%%s) is not allowed", raw, raw[i+1:i+3])
			case hex[0] == '0' || hex[0] == '1' || hex == "7f":
				return fmt.Errorf("path %q: an encoded control character (%%%s) is not allowed", raw, raw[i+1:i+3])
			}
		}
	}
	segments := strings.Split(raw[1:], "/")
	for i, s := range segments {
		switch s {
		case ".", "..":
			return fmt.Errorf("path %q: a dot segment (%q) is not allowed", raw, s)
		case "":
			// "/" alone, and one trailing slash, are the only empty segments.
			if i != len(segments)-1 {
				return fmt.Errorf("path %q: an empty segment (//) is not allowed", raw)
			}
		}
	}
	return nil
}

// RawPath is the path of r as its client sent it: the request target
// before the query, still escaped.
func RawPath(r *http.Request) string {
	raw := r.RequestURI
	if raw == "" || raw == "*" || !strings.HasPrefix(raw, "/") {
		// Absolute-form targets and requests built in process.
		raw = r.URL.EscapedPath()
	}
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	return raw
}

// RefuseUnsafePaths answers 400 Bad Request, as a Kubernetes Status, to a
// request whose path CheckPath refuses (checked on the path as sent and
// as decoded), before authentication, authorization or any lookup; every
// other request goes to next.
func RefuseUnsafePaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := CheckPath(RawPath(r))
		if err == nil && r.URL.Path != "" {
			err = CheckPath(r.URL.Path)
		}
		if err != nil {
			writeBadRequest(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeBadRequest(w http.ResponseWriter, err error) {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure,
		Message:  err.Error(),
		Reason:   metav1.StatusReasonBadRequest,
		Code:     http.StatusBadRequest,
	}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
}
