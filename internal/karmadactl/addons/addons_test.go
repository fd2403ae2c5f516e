package addons

import (
	"bytes"
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func values(t *testing.T, y string) map[string]any {
	t.Helper()
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func namesOf(as []Addon) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return strings.Join(out, ",")
}

func TestResolveNamesAndAll(t *testing.T) {
	got, err := Resolve([]string{"karmada-search", "all", "karmada-search"}, false)
	if err != nil || namesOf(got) != "karmada-descheduler,karmada-metrics-adapter,karmada-search" {
		t.Errorf("enable all: %s, %v (all is every addon but the estimator, each once)", namesOf(got), err)
	}
	got, err = Resolve([]string{"all"}, true)
	if err != nil || len(got) != 4 {
		t.Errorf("disable all: %s, %v", namesOf(got), err)
	}
	if _, err := Resolve([]string{"karmada-dashboard"}, false); err == nil || !strings.Contains(err.Error(), `unknown addon "karmada-dashboard"`) || !strings.Contains(err.Error(), "karmada-search") {
		t.Errorf("an unknown addon: %v, want its name and the known ones", err)
	}
	if _, err := Resolve(nil, false); err == nil {
		t.Error("no name accepted")
	}
}

func TestEnableAndDisableChangeOnlyComponents(t *testing.T) {
	vals := values(t, `
components: [search]
apiServer: {replicaCount: 2}
schedulerEstimator: {timeout: 5s}
`)
	search, _ := find("karmada-search")
	adapter, _ := find("karmada-metrics-adapter")
	est, _ := find(estimator)
	desch, _ := find(descheduler)
	next, err := Enable(vals, []Addon{adapter}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !Enabled(next, adapter) || !Enabled(next, search) || Enabled(vals, adapter) {
		t.Errorf("components %v (the input %v must not change)", next["components"], vals["components"])
	}
	if next["apiServer"].(map[string]any)["replicaCount"] != vals["apiServer"].(map[string]any)["replicaCount"] {
		t.Error("other values lost")
	}
	if _, err := Enable(vals, []Addon{desch}, nil); err == nil || !strings.Contains(err.Error(), "needs karmada-scheduler-estimator") {
		t.Errorf("the descheduler without an estimator: %v", err)
	}
	if _, err := Enable(vals, []Addon{est}, nil); err == nil || !strings.Contains(err.Error(), "--cluster") {
		t.Errorf("an estimator without a member: %v", err)
	}
	m1 := &Member{Cluster: "member1", Server: "https://10.0.0.1:6443", CA: []byte("ca"), Cert: []byte("crt"), Key: []byte("key")}
	m2 := &Member{Cluster: "member2", Server: "https://10.0.0.2:6443", CA: []byte("ca"), Cert: []byte("crt"), Key: []byte("key")}
	next, err = Enable(next, []Addon{est, desch}, m1)
	if err != nil {
		t.Fatal(err)
	}
	next, err = Enable(next, []Addon{est}, m2)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(EstimatorMembers(next), ","); got != "member1,member2" || next["schedulerEstimator"].(map[string]any)["timeout"] != "5s" {
		t.Errorf("estimator members %s, values %v", got, next["schedulerEstimator"])
	}
	// Again for member1: replaced, not added.
	if again, _ := Enable(next, []Addon{est}, m1); strings.Join(EstimatorMembers(again), ",") != "member1,member2" {
		t.Errorf("re-enabling member1: %v", EstimatorMembers(again))
	}
	// One member's estimator off: the addon stays for the other.
	one, err := Disable(next, []Addon{est}, "member1")
	if err != nil || !Enabled(one, est) || strings.Join(EstimatorMembers(one), ",") != "member2" {
		t.Errorf("member1's estimator off: %v %v %v", one["components"], EstimatorMembers(one), err)
	}
	if _, err := Disable(one, []Addon{est}, "member1"); err == nil || !strings.Contains(err.Error(), "it runs for: member2") {
		t.Errorf("a member without one: %v", err)
	}
	// The last estimator cannot go while the descheduler runs.
	if _, err := Disable(one, []Addon{est}, "member2"); err == nil || !strings.Contains(err.Error(), "disable karmada-descheduler too") {
		t.Errorf("the last estimator under the descheduler: %v", err)
	}
	all, err := Disable(next, []Addon{desch, est, search, adapter}, "")
	if err != nil || len(components(all)) != 0 || len(EstimatorMembers(all)) != 0 {
		t.Errorf("all off: %v %v %v", all["components"], EstimatorMembers(all), err)
	}
}

func TestPrintTableAsKarmada(t *testing.T) {
	var b bytes.Buffer
	PrintTable(&b, [][2]string{{"karmada-descheduler", "disabled"}, {"karmada-scheduler-estimator", "enabled"}, {"karmada-search", "unhealthy"}})
	want := `|-----------------------------|-----------|
|         ADDON NAME          |  STATUS   |
|-----------------------------|-----------|
| karmada-descheduler         | disabled  |
| karmada-scheduler-estimator | enabled   |
| karmada-search              | unhealthy |
|-----------------------------|-----------|
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestMemberKubeconfigNeedsACertificate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cert := write("cert.kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: m1, cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: `+b64("CA")+`}}]
users: [{name: est, user: {client-certificate-data: `+b64("CRT")+`, client-key-data: `+b64("KEY")+`}}]
contexts: [{name: m1, context: {cluster: m1, user: est}}, {name: tok, context: {cluster: m1, user: tok}}]
current-context: m1
`)
	m, err := MemberFromKubeconfig("member1", cert, "")
	if err != nil || m.Server != "https://10.0.0.1:6443" || string(m.CA) != "CA" || string(m.Cert) != "CRT" || string(m.Key) != "KEY" {
		t.Fatalf("%+v, %v", m, err)
	}
	// The same identity in files, as karmada-local writes kubeconfigs.
	files := write("files.kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: m1, cluster: {server: "https://10.0.0.1:6443", certificate-authority: `+write("ca.crt", "CA")+`}}]
users: [{name: est, user: {client-certificate: `+write("tls.crt", "CRT")+`, client-key: `+write("tls.key", "KEY")+`}}]
contexts: [{name: m1, context: {cluster: m1, user: est}}]
current-context: m1
`)
	m, err = MemberFromKubeconfig("member1", files, "")
	if err != nil || string(m.CA) != "CA" || string(m.Cert) != "CRT" || string(m.Key) != "KEY" {
		t.Fatalf("files: %+v, %v", m, err)
	}
	token := write("token.kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: m1, cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: `+b64("CA")+`}}]
users: [{name: tok, user: {token: abc}}]
contexts: [{name: tok, context: {cluster: m1, user: tok}}]
current-context: tok
`)
	if _, err := MemberFromKubeconfig("member1", token, ""); err == nil || !strings.Contains(err.Error(), "client certificate") {
		t.Errorf("a token kubeconfig: %v, want a refusal naming the certificate", err)
	}
	if _, err := MemberFromKubeconfig("member1", cert, "nope"); err == nil || !strings.Contains(err.Error(), `--member-context="nope"`) {
		t.Errorf("an unknown context: %v", err)
	}
	if _, err := MemberFromKubeconfig("member1", dir+"/missing", ""); err == nil || !strings.Contains(err.Error(), "--member-kubeconfig") {
		t.Errorf("a missing file: %v", err)
	}
}
