package features

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnabled(t *testing.T) {
	known := []string{"b", "a", "c"}
	for _, c := range []struct {
		spec    []string
		want    []string
		wantErr string
	}{
		{spec: []string{"*"}, want: []string{"a", "b", "c"}},
		{spec: []string{"*", "-b"}, want: []string{"a", "c"}},
		{spec: []string{"-b", "*"}, want: []string{"a", "c"}},
		{spec: []string{"c", " a"}, want: []string{"a", "c"}},
		{spec: nil, want: nil},
		{spec: []string{"*", "z"}, wantErr: `--things: unknown thing "z"; known: a, b, c`},
		{spec: []string{"-z"}, wantErr: `unknown thing "z"`},
	} {
		got, err := Enabled("--things", "thing", known, c.spec)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want one containing %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.spec, err)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%v (-want,+got):\n%s", c.spec, d)
		}
	}
}

// A thing off by default is left out of "*" and in when named.
func TestEnabledOffByDefault(t *testing.T) {
	known := []string{"a", "b", "c"}
	for _, c := range []struct {
		spec, want []string
	}{
		{[]string{"*"}, []string{"a", "c"}},
		{[]string{"*", "b"}, []string{"a", "b", "c"}},
		{[]string{"b"}, []string{"b"}},
		{[]string{"*", "b", "-b"}, []string{"a", "c"}},
	} {
		got, err := Enabled("--things", "thing", known, c.spec, "b")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%v (-want,+got):\n%s", c.spec, d)
		}
	}
}
