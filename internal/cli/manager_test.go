package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
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

func TestManagerOptions(t *testing.T) {
	o := &ManagerOptions{}
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.AddFlags(f, ":10999")
	if err := f.Parse([]string{"--kube-api-qps=0"}); err != nil {
		t.Fatal(err)
	}
	if o.HealthProbeBindAddress != ":10999" || !o.LeaderElect || o.KubeAPIBurst != 400 {
		t.Errorf("defaults: %+v", o)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--kube-api-qps=0") {
		t.Errorf("--kube-api-qps=0: %v, want an error naming the flag", err)
	}
	// --kubeconfig is honoured, and only it: a missing file is an error
	// naming the flag even where $KUBECONFIG or in-cluster would work.
	o.KubeAPIQPS = 7
	o.Kubeconfig = filepath.Join(t.TempDir(), "missing")
	if _, err := o.RESTConfig(); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("missing --kubeconfig: %v, want an error naming the flag", err)
	}
	path := filepath.Join(t.TempDir(), "config")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6999"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Kubeconfig = path
	cfg, err := o.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6999" || cfg.QPS != 7 || cfg.Burst != 400 {
		t.Errorf("config from --kubeconfig: host %s, QPS %v, burst %d", cfg.Host, cfg.QPS, cfg.Burst)
	}
}
