package app

import (
	"strings"
	"testing"
)

func TestEnabledControllers(t *testing.T) {
	cases := []struct {
		spec    []string
		want    string
		wantErr string
	}{
		{spec: []string{"*"}, want: "binding,bindingStatus,cluster,clusterStatus,detector,execution,namespace,workStatus"},
		{spec: []string{"*", "-namespace"}, want: "binding,bindingStatus,cluster,clusterStatus,detector,execution,workStatus"},
		{spec: []string{"-namespace", "*"}, want: "binding,bindingStatus,cluster,clusterStatus,detector,execution,workStatus"},
		{spec: []string{"cluster", "clusterStatus"}, want: "cluster,clusterStatus"},
		{spec: []string{"cluster", "-cluster"}, want: ""},
		{spec: []string{"*", "bogus"}, wantErr: `unknown controller "bogus"`},
		{spec: []string{"-bogus"}, wantErr: `unknown controller "bogus"`},
	}
	for _, c := range cases {
		got, err := enabledControllers(c.spec)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "--controllers") {
				t.Errorf("%v: error %v, want one naming --controllers and %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("%v: got %v (%v), want %s", c.spec, got, err, c.want)
		}
	}
}
