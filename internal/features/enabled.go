package features

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Enabled resolves a list flag such as --controllers or --plugins against
// the known names of things of one kind (what: "controller", "plugin"): "*"
// enables all but those offByDefault, "name" one, "-name" disables one
// (which wins over "*"). It
// returns the enabled names sorted, or an error naming the flag, the unknown
// name and the known ones.
func Enabled(flagName, what string, known []string, spec []string, offByDefault ...string) ([]string, error) {
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	isKnown := make(map[string]bool, len(known))
	for _, n := range known {
		isKnown[n] = true
	}
	all, on, off := false, map[string]bool{}, map[string]bool{}
	for _, s := range spec {
		s = strings.TrimSpace(s)
		name := strings.TrimPrefix(s, "-")
		switch {
		case s == "*":
			all = true
		case !isKnown[name]:
			return nil, fmt.Errorf("%s: unknown %s %q; known: %s", flagName, what, name, strings.Join(sorted, ", "))
		case strings.HasPrefix(s, "-"):
			off[name] = true
		default:
			on[name] = true
		}
	}
	var out []string
	for _, n := range sorted {
		if !off[n] && (all && !slices.Contains(offByDefault, n) || on[n]) {
			out = append(out, n)
		}
	}
	return out, nil
}
