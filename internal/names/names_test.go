package names

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func TestBindingName(t *testing.T) {
	for _, c := range []struct{ kind, name, want string }{
		{"Deployment", "nginx", "nginx-deployment"},
		{"ClusterRole", "system:test-role", "system.test-role-clusterrole"},
		{"ClusterRoleBinding", "system::tt:tom", "system..tt.tom-clusterrolebinding"},
		{"pods", "Pod", "pod-pods"},
		{"CustomKind", "Upper:Case", "upper.case-customkind"},
	} {
		if got := BindingName(c.kind, c.name); got != c.want {
			t.Errorf("BindingName(%q, %q) = %q, want %q", c.kind, c.name, got, c.want)
		}
	}
}

// TestWorkName checks WorkName against names Karmada v1.19 gives (the first
// five) and against the rule written out independently.
func TestWorkName(t *testing.T) {
	long := strings.Repeat("a", 253)
	for _, c := range []struct{ kind, name, namespace, want string }{
		// Karmada v1.19's own names.
		{"Deployment", "nginx", "default", "nginx-687f7fb96f"},
		{"ClusterRole", "system:aggregate-to-view", "", "system.aggregate-to-view-fc889dbfd"},
		{"Namespace", "demo", "", "demo-6654f4c4f6"},
		{"ConfigMap", "MyConfig", "team-a", "myconfig-7c6c596556"},
		{"Service", "web", "prod", "web-bc7d89c89"},
		// Upper case hashes as lower case; the prefix is lower-cased too.
		{"Deployment", "Nginx", "Default", "nginx-687f7fb96f"},
		{"deployment", "nginx", "default", "nginx-687f7fb96f"},
	} {
		got := WorkName(c.kind, c.name, c.namespace)
		if got != c.want {
			t.Errorf("WorkName(%q, %q, %q) = %q, want %q", c.kind, c.name, c.namespace, got, c.want)
		}
		if r := ruleWorkName(c.kind, c.name, c.namespace); got != r {
			t.Errorf("WorkName(%q, %q, %q) = %q, the rule gives %q", c.kind, c.name, c.namespace, got, r)
		}
	}
	// Names that differ only by namespace, kind or scope get different Works.
	seen := map[string]string{}
	for _, k := range [][3]string{{"Deployment", "web", "a"}, {"Deployment", "web", "b"}, {"Service", "web", "a"}, {"Namespace", "web", ""}, {"ClusterRole", "web", ""}} {
		n := WorkName(k[0], k[1], k[2])
		if other, ok := seen[n]; ok {
			t.Errorf("WorkName%v = %q, the same as for %s", k, n, other)
		}
		seen[n] = fmt.Sprint(k)
	}
	// A name as long as names go keeps the suffix and stays valid.
	got := WorkName("ConfigMap", long, "default")
	if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
		t.Errorf("WorkName of a %d-character name = %q, invalid: %v", len(long), got, errs)
	}
	if r := ruleWorkName("ConfigMap", long, "default"); !strings.HasSuffix(got, r[strings.LastIndex(r, "-"):]) {
		t.Errorf("WorkName of a long name = %q, lost the suffix of %q", got, r)
	}
	if got := NamespaceWorkName("demo"); got != "demo-6654f4c4f6" {
		t.Errorf("NamespaceWorkName(demo) = %q, want demo-6654f4c4f6", got)
	}
}

// ruleWorkName is the rule as the issue states it, written out once more:
// FNV-32a over the lower-cased "<namespace>-<name>-<kind>" with ':' in the
// name replaced by '.'.
func ruleWorkName(kind, name, namespace string) string {
	n := strings.ReplaceAll(strings.ToLower(name), ":", ".")
	s := n + "-" + kind
	if namespace != "" {
		s = namespace + "-" + s
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(s)))
	return n + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

func TestKeptWorkName(t *testing.T) {
	work := func(ns, name string, deleting bool) workv1alpha1.Work {
		w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if deleting {
			now := metav1.Now()
			w.DeletionTimestamp = &now
		}
		return w
	}
	for _, c := range []struct {
		name     string
		existing []workv1alpha1.Work
		want     string
	}{
		{"none there", nil, "web-abc"},
		{"other namespaces only", []workv1alpha1.Work{work("karmada-es-m2", "web-deployment-0011", false)}, "web-abc"},
		{"an earlier version's Work", []workv1alpha1.Work{work("karmada-es-m1", "web-deployment-0011", false)}, "web-deployment-0011"},
		{"Karmada's name beside an old one", []workv1alpha1.Work{work("karmada-es-m1", "web-deployment-0011", false), work("karmada-es-m1", "web-abc", false)}, "web-abc"},
		{"an old one being deleted", []workv1alpha1.Work{work("karmada-es-m1", "web-deployment-0011", true)}, "web-abc"},
	} {
		if got := KeptWorkName(c.existing, "karmada-es-m1", "web-abc"); got != c.want {
			t.Errorf("%s: KeptWorkName = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClusterNameErrors(t *testing.T) {
	for name, ok := range map[string]bool{
		"member1": true, strings.Repeat("m", 48): true,
		"": false, strings.Repeat("m", 49): false, "Member1": false, "member_1": false, "-member": false,
	} {
		if errs := ClusterNameErrors(name); (len(errs) == 0) != ok {
			t.Errorf("ClusterNameErrors(%q) = %v, want valid %v", name, errs, ok)
		}
	}
}

// Names of any valid length give valid binding names and label values,
// distinct for distinct names.
func TestLongNames(t *testing.T) {
	long := strings.Repeat("a", 253)
	b := BindingName("Deployment", long)
	if len(b) > 253 || len(validation.IsDNS1123Subdomain(b)) > 0 {
		t.Fatalf("binding name %q (%d) is not a valid name", b, len(b))
	}
	if BindingName("Deployment", long) != b || BindingName("Deployment", long[1:]+"b") == b {
		t.Fatal("shortened binding names are not stable, or not distinct")
	}
	if got := BindingName("Deployment", "web"); got != "web-deployment" {
		t.Fatalf("a short name changed: %q", got)
	}
	sixty := strings.Repeat("x", 60) + "-deployment"
	v := LabelValue(sixty)
	if len(validation.IsValidLabelValue(v)) > 0 || v == LabelValue(strings.Repeat("x", 59)+"y-deployment") {
		t.Fatalf("label value %q of %q is invalid or not distinct", v, sixty)
	}
	if LabelValue("web-deployment") != "web-deployment" {
		t.Fatal("a short label value changed")
	}
	if v := LabelValue("_" + strings.Repeat("x", 70)); len(validation.IsValidLabelValue(v)) > 0 {
		t.Fatalf("label value %q is invalid", v)
	}
}

// Karmada's policy names: the name ('.' for ':'), "-", and
// rand.SafeEncodeString of the decimal FNV-32a of what Kubernetes'
// DeepHashObject writes for the string namespace+GVK:
// "(string)<namespace><group>/<version>, Kind=<kind>".
func TestPolicyName(t *testing.T) {
	for _, c := range []struct {
		namespace, name string
		gvk             schema.GroupVersionKind
		hashed          string
	}{
		{"default", "nginx", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "(string)defaultapps/v1, Kind=Deployment"},
		{"", "system:reader", schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "(string)rbac.authorization.k8s.io/v1, Kind=ClusterRole"},
		{"shop", "Web", schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "(string)shop/v1, Kind=ConfigMap"},
	} {
		h := fnv.New32a()
		h.Write([]byte(c.hashed))
		want := strings.ToLower(strings.ReplaceAll(c.name, ":", ".") + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32())))
		if got := PolicyName(c.namespace, c.name, c.gvk); got != want {
			t.Errorf("PolicyName(%q, %q, %v) = %q, want %q", c.namespace, c.name, c.gvk, got, want)
		}
	}
	// Another namespace or kind: another name.
	a := PolicyName("a", "x", schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	if a == PolicyName("b", "x", schema.GroupVersionKind{Version: "v1", Kind: "Secret"}) || a == PolicyName("a", "x", schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) {
		t.Errorf("policy names collide: %s", a)
	}
}
