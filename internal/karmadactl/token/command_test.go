package token

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tokens "github.com/karmada-go/karmada/internal/registration/token"
)

func TestPrintList(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	exp := now.Add(90 * time.Minute)
	past := now.Add(-time.Minute)
	var out bytes.Buffer
	PrintList(&out, []tokens.Info{
		{ID: "abcdef", Token: "abcdef.0123456789abcdef", Expires: &exp, Usages: []string{"authentication", "signing"}, Description: "edge", Groups: []string{tokens.DefaultGroup}},
		{ID: "ghijkl", Token: "ghijkl.0123456789abcdef"},
		{ID: "mnopqr", Token: "mnopqr.0123456789abcdef", Expires: &past},
	}, now)
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		rows[f[0]] = f
	}
	for token, want := range map[string]string{
		"TOKEN":                   "TOKEN TTL EXPIRES USAGES DESCRIPTION EXTRA GROUPS",
		"abcdef.0123456789abcdef": "abcdef.0123456789abcdef 90m 2026-11-23T13:30:00Z authentication,signing edge " + tokens.DefaultGroup,
		"ghijkl.0123456789abcdef": "ghijkl.0123456789abcdef <forever> <never> <none> <none> <none>",
		"mnopqr.0123456789abcdef": "mnopqr.0123456789abcdef <invalid> 2026-11-23T11:59:00Z <none> <none> <none>",
	} {
		if got := strings.Join(rows[token], " "); got != want {
			t.Errorf("row %s: %q, want %q", token, got, want)
		}
	}
}
