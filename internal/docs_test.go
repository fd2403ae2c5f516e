package internal_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureMapIsComplete fails when a package under internal/ is
// missing from docs/architecture.md's map: its area (internal/<area>/) and,
// for a package below an area, its own folder name followed by a slash.
// karmadactl's subcommands are covered by the map's internal/karmadactl/<verb>/.
func TestArchitectureMapIsComplete(t *testing.T) {
	b, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, p := range list(t) {
		rel := p.rel()
		parts := strings.Split(rel, "/")
		if parts[0] != "internal" || len(parts) < 2 {
			continue
		}
		top := parts[0] + "/" + parts[1] + "/"
		if !strings.Contains(doc, top) {
			t.Errorf("docs/architecture.md does not map %s", top)
			continue
		}
		if len(parts) == 2 || (parts[1] == "karmadactl" && len(parts) == 3) {
			continue
		}
		last := parts[len(parts)-1]
		if !regexp.MustCompile(`(^|[\s(,/])` + regexp.QuoteMeta(last) + `/`).MatchString(doc) {
			t.Errorf("docs/architecture.md does not map %s (no %s/ in it)", rel, last)
		}
	}
}

var keyConst = regexp.MustCompile(`(?m)^\s*(?:const\s+)?([A-Z][A-Za-z]*(?:Label|Annotation))\s*=\s*"`)

// TestKeysLiveInTheAPI fails when a package under internal/ declares a
// label or annotation key: every key lives in api/<group>/<version>/
// well_known.go, where users and every component find it. The tools' own
// marks (karmada-local's on the local fleet's nodes, karmada-bench's on
// its objects) are theirs.
func TestKeysLiveInTheAPI(t *testing.T) {
	for _, p := range list(t) {
		rel := p.rel()
		if !strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "internal/localup") || strings.HasPrefix(rel, "internal/bench") {
			continue
		}
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(p.Dir + "/" + f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range keyConst.FindAllStringSubmatch(string(b), -1) {
				t.Errorf("%s/%s declares the key %s: keys live in api/<group>/<version>/well_known.go", rel, f, m[1])
			}
		}
	}
}
