// Package internal_test holds the checks of how the packages under internal/
// may depend on one another.
package internal_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	"karmada-metrics-adapter":      {"internal/autoscaling/metricsadapter/app"},
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

// area is the folder a package belongs to: internal/<area> for the packages
// under internal/, the package itself elsewhere.
func area(rel string) string {
	parts := strings.Split(rel, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return rel
}

// TestNoFolderLoop fails when the folders under internal/ depend on one
// another in a circle (internal/a imports internal/b, which imports
// internal/a, directly or through others), even when no package cycle
// exists: what two areas share lives in a neutral package below both.
func TestNoFolderLoop(t *testing.T) {
	type edge struct{ from, to string }
	why := map[edge][]string{}
	graph := map[string][]string{}
	for _, p := range list(t) {
		from := area(p.rel())
		if !strings.HasPrefix(from, "internal/") {
			continue
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok || !strings.HasPrefix(rel, "internal/") {
				continue
			}
			to := area(rel)
			if to == from {
				continue
			}
			e := edge{from, to}
			if why[e] == nil {
				graph[from] = append(graph[from], to)
			}
			why[e] = append(why[e], p.rel()+" -> "+rel)
		}
	}
	for _, loop := range stronglyConnected(graph) {
		var lines []string
		in := map[string]bool{}
		for _, a := range loop {
			in[a] = true
		}
		for e, w := range why {
			if in[e.from] && in[e.to] {
				lines = append(lines, w...)
			}
		}
		sort.Strings(lines)
		t.Errorf("folders %v depend on one another in a circle:\n  %s", loop, strings.Join(lines, "\n  "))
	}
}

// stronglyConnected returns the groups of more than one node that reach one
// another (Tarjan's algorithm), each sorted.
func stronglyConnected(graph map[string][]string) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range graph[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var group []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			group = append(group, w)
			if w == v {
				break
			}
		}
		if len(group) > 1 {
			sort.Strings(group)
			out = append(out, group)
		}
	}
	nodes := make([]string, 0, len(graph))
	for v := range graph {
		nodes = append(nodes, v)
	}
	sort.Strings(nodes)
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return out
}

func TestStronglyConnected(t *testing.T) {
	got := stronglyConnected(map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}})
	want := "[[a b c] [d e]]"
	sort.Slice(got, func(i, j int) bool { return got[i][0] < got[j][0] })
	if s := fmt.Sprint(got); s != want {
		t.Errorf("stronglyConnected: %s, want %s", s, want)
	}
}

// linkedControllers: the controllers each lean binary may link. karmadactl
// runs none (its dry runs use the pure scheduling cycle); the agent runs
// the member side (internal/agent's memberSide, the one list of what it
// runs).
var linkedControllers = map[string][]string{
	"karmadactl":    nil,
	"karmada-agent": {"internal/clusters/clusterstatus", "internal/propagation/execution", "internal/propagation/workstatus", "internal/services/export"},
}

// TestLeanBinariesLinkOnlyTheirControllers fails when karmadactl or the
// agent links a controller package (directly or not) it does not run: a
// constant or a pure function it needs lives outside the controller.
func TestLeanBinariesLinkOnlyTheirControllers(t *testing.T) {
	ctrls := controllers(t, list(t))
	for binary, allowed := range linkedControllers {
		cmd := exec.Command("go", "list", "-deps", "./cmd/"+binary)
		cmd.Dir = ".."
		deps, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./cmd/%s: %v", binary, err)
		}
		for _, d := range strings.Fields(string(deps)) {
			rel := strings.TrimPrefix(d, module)
			if ctrls[d] && !slices.Contains(allowed, rel) {
				t.Errorf("%s links controller %s", binary, rel)
			}
		}
	}
}
