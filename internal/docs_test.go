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
