// Package internal_test holds the checks of how the packages under internal/
// may depend on one another.
package internal_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/karmada-go/karmada/"

type pkg struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

func (p pkg) rel() string { return strings.TrimPrefix(p.ImportPath, module) }

// allImports: what the package and its tests import directly.
func (p pkg) allImports() []string {
	return append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 40 {
		t.Fatalf("go list found %d packages, want at least 40", len(pkgs))
	}
	return pkgs
}

var reconcilerSetup = regexp.MustCompile(`(?m)^func \([a-z]+ \*?[A-Za-z]+\) SetupWithManager\(`)

// controllers: the packages that define a controller (a SetupWithManager
// method).
func controllers(t *testing.T, pkgs []pkg) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if reconcilerSetup.Match(b) {
				out[p.ImportPath] = true
			}
		}
	}
	if len(out) < 15 {
		t.Fatalf("found %d controller packages, want at least 15: %v", len(out), out)
	}
	return out
}

// TestNoControllerImportsAnother fails when a controller package depends,
// directly or not, on another controller package: names they share live
// beside the API types or in a package named for the concept, and state
// passes between controllers through the API server.
func TestNoControllerImportsAnother(t *testing.T) {
	pkgs := list(t)
	ctrls := controllers(t, pkgs)
	for _, p := range pkgs {
		if !ctrls[p.ImportPath] {
			continue
		}
		cmd := exec.Command("go", "list", "-deps", "-test", p.ImportPath)
		cmd.Dir = ".."
		deps, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p.ImportPath, err)
		}
		for _, d := range strings.Fields(string(deps)) {
			// A test variant reads "pkg [pkg.test]".
			if ctrls[d] && d != p.ImportPath {
				t.Errorf("controller %s depends on controller %s", p.rel(), strings.TrimPrefix(d, module))
			}
		}
	}
}

// binaries: each binary's own packages (its command, flags and what only it
// runs), by path prefix.
var binaries = map[string][]string{
	"karmada-aggregated-apiserver": {"internal/aggregatedapiserver/app"},
	"karmada-agent":                {"internal/agent"},
	"karmada-bench":                {"internal/bench"},
	"karmada-controller-manager":   {"internal/controllermanager"},
	"karmadactl":                   {"internal/karmadactl"},
	"karmada-local":                {"internal/karmadalocal", "internal/localup"},
	"karmada-scheduler":            {"internal/scheduler/app"},
	"karmada-scheduler-estimator":  {"internal/estimator/app"},
	"karmada-descheduler":          {"internal/descheduler/app"},
	"karmada-search":               {"internal/search/app"},
	"karmada-webhook":              {"internal/webhook/app"},
}

func binaryOf(rel string) string {
	for b, prefixes := range binaries {
		for _, p := range prefixes {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				return b
			}
		}
	}
	if strings.HasPrefix(rel, "cmd/") {
		return strings.TrimPrefix(rel, "cmd/")
	}
	return ""
}

// allowedAcross are the binary-to-binary imports still to be removed (each
// names a library to extract); none may be added.
var allowedAcross = map[string]bool{}

// TestNoBinaryImportsAnother fails when one binary's packages import
// another's: what two binaries share is a library outside both.
func TestNoBinaryImportsAnother(t *testing.T) {
	for _, p := range list(t) {
		from := binaryOf(p.rel())
		if from == "" {
			continue
		}
		for _, imp := range p.allImports() {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if to := binaryOf(rel); to != "" && to != from && !allowedAcross[p.rel()+" -> "+rel] {
				t.Errorf("%s (%s) imports %s (%s)", p.rel(), from, rel, to)
			}
		}
	}
}

// TestLibrariesDoNotImportCLI: internal/cli (flags, logging, serving) is the
// binaries'; a library that needs one of its parts takes it as a value.
func TestLibrariesDoNotImportCLI(t *testing.T) {
	var offenders []string
	for _, p := range list(t) {
		if binaryOf(p.rel()) != "" || strings.HasPrefix(p.rel(), "test/") || p.rel() == "internal/testenv" {
			continue
		}
		for _, imp := range p.Imports {
			if imp == module+"internal/cli" {
				offenders = append(offenders, p.rel())
			}
		}
	}
	sort.Strings(offenders)
	if len(offenders) > 0 {
		t.Errorf("libraries import internal/cli: %v", offenders)
	}
}
