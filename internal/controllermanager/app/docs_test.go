package app

import (
	"os"
	"strings"
	"testing"
)

// TestPageNamesEveryController fails when a controller of --controllers has
// no section (### `name`) on docs/karmada-controller-manager.md.
func TestPageNamesEveryController(t *testing.T) {
	page, err := os.ReadFile("../../../docs/karmada-controller-manager.md")
	if err != nil {
		t.Fatal(err)
	}
	names := controllerNames()
	if len(names) < 20 {
		t.Fatalf("%d controllers, want at least 20: %v", len(names), names)
	}
	for _, name := range names {
		if !strings.Contains(string(page), "### `"+name+"`") {
			t.Errorf("docs/karmada-controller-manager.md has no section ### `%s`", name)
		}
	}
}
