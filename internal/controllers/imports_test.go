// Package controllers_test holds checks that span every controller package.
package controllers_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoControllerImportsAnother fails when a controller package depends,
// directly or not, on another controller package: names they share live
// beside the API types or in a package named for the concept, and state
// passes between controllers through the API server.
func TestNoControllerImportsAnother(t *testing.T) {
	const prefix = "github.com/karmada-go/karmada/internal/controllers/"
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 7 {
		t.Fatalf("go list found %d controller packages (%v), want at least 7", len(pkgs), pkgs)
	}
	for _, p := range pkgs {
		deps, err := exec.Command("go", "list", "-deps", "-test", p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		for _, d := range strings.Fields(string(deps)) {
			// A test variant reads "pkg [pkg.test]" and lists as pkg.
			if strings.HasPrefix(d, prefix) && d != p && !strings.HasPrefix(d, p+".") && !strings.HasPrefix(d, "["+p) && d != p+".test" {
				t.Errorf("%s depends on %s", strings.TrimPrefix(p, prefix), strings.TrimPrefix(d, prefix))
			}
		}
	}
}
