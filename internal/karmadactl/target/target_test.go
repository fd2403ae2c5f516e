package target

import (
	"strings"
	"testing"

	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// A member is reached at the control plane's URL plus the cluster's proxy
// path; the control plane at its own URL.
func TestGetterTargetsTheProxy(t *testing.T) {
	g := &options.Global{}
	f := NewFlags(g, Karmada, Members)
	f.config.APIServer = ptr("https://karmada.example:5443/")
	for cluster, want := range map[string]string{
		"":        "https://karmada.example:5443/",
		"member1": "https://karmada.example:5443/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy",
	} {
		cfg, err := f.ForCluster(cluster).ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != want {
			t.Errorf("cluster %q: host %s, want %s", cluster, cfg.Host, want)
		}
	}
	// The factory follows the flags as they are when the command runs.
	f.Scope, f.Cluster = Members, "member2"
	cfg, err := f.Factory().ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(cfg.Host, "/clusters/member2/proxy") || cfg.GroupVersion == nil {
		t.Errorf("factory host %s group version %v: want member2's proxy with kubectl's defaults", cfg.Host, cfg.GroupVersion)
	}
}

func ptr(s string) *string { return &s }

// --operation-scope and -C are checked, naming what is allowed.
func TestValidate(t *testing.T) {
	g := &options.Global{}
	for _, tc := range []struct {
		scopes         []string
		scope, cluster string
		want           string
	}{
		{[]string{Karmada, Members}, Karmada, "", ""},
		{[]string{Karmada, Members}, Members, "member1", ""},
		{[]string{Karmada, Members}, Members, "", "--cluster (-C) is required"},
		{[]string{Karmada, Members}, Karmada, "member1", "goes with --operation-scope members"},
		{[]string{Karmada, Members}, All, "", `--operation-scope="all": must be karmada or members`},
		{[]string{Karmada, Members}, Members, "Member_1", "must be a DNS label"},
		{[]string{Members}, "", "", "--cluster (-C) is required"},
		{[]string{Members}, "", "member1", ""},
		{nil, "", "", ""},
	} {
		f := NewFlags(g, tc.scopes...)
		if tc.scope != "" {
			f.Scope = tc.scope
		}
		f.Cluster = tc.cluster
		err := f.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v %q %q: %v", tc.scopes, tc.scope, tc.cluster, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v %q %q: %v, want %q", tc.scopes, tc.scope, tc.cluster, err, tc.want)
		}
	}
}

// Each target has a discovery cache of its own.
func TestCacheDirName(t *testing.T) {
	a := cacheDirName("https://127.0.0.1:5443")
	b := cacheDirName("https://127.0.0.1:5443/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy")
	if a == b || strings.ContainsAny(b, "/:") {
		t.Errorf("cache directories %q and %q", a, b)
	}
}
