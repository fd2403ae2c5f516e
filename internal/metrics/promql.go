package metrics

import (
	"regexp"
	"sort"
	"strings"
)

// Referenced returns the metric names a PromQL expression reads, sorted and
// without repeats: every identifier that is not a function, a keyword, a
// label (in a matcher or a by/without/on/ignoring/group list) or a
// duration. It is a reader for the expressions of our own dashboards and
// alert rules, not a PromQL parser: an expression it cannot read yields
// names that are not metrics, which the tests then report.
func Referenced(expr string) []string {
	s := quoted.ReplaceAllString(expr, `""`)
	s = braces.ReplaceAllString(s, "")
	s = brackets.ReplaceAllString(s, "")
	s = grouping.ReplaceAllString(s, "")
	seen := map[string]bool{}
	for _, m := range ident.FindAllStringSubmatchIndex(s, -1) {
		name := s[m[2]:m[3]]
		rest := strings.TrimLeft(s[m[3]:], " \t\n")
		if strings.HasPrefix(rest, "(") || keywords[strings.ToLower(name)] {
			continue
		}
		seen[name] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	braces   = regexp.MustCompile(`\{[^}]*\}`)
	brackets = regexp.MustCompile(`\[[^\]]*\]`)
	grouping = regexp.MustCompile(`(?i)\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	// An identifier not preceded by a digit or a dot (so not part of a
	// number such as 1e3 or 0.5).
	ident    = regexp.MustCompile(`(?:^|[^0-9.a-zA-Z_:])([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true}
)
