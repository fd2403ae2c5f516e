package names

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/davecgh/go-spew/spew"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// karmadaWorkName is the rule written out with the hashing Karmada uses
// (go-spew's "%#v" of the string into FNV-32a), to check WorkName against it
// independently.
func karmadaWorkName(kind, name, namespace string) string {
	id := strings.ToLower(name + "-" + kind)
	if namespace != "" {
		id = strings.ToLower(namespace + "-" + name + "-" + kind)
	}
	h := fnv.New32a()
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	printer.Fprintf(h, "%#v", id)
	return strings.ToLower(strings.ReplaceAll(name, ":", ".")) + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

func TestWorkName(t *testing.T) {
	long := strings.Repeat("a", 253)
	for _, c := range []struct{ kind, name, namespace, want string }{
		{"Deployment", "nginx", "default", "nginx-6c47d997fc"},
		{"Service", "nginx", "default", "nginx-5cc8c8f75c"},
		{"Deployment", "nginx", "shop", "nginx-6c957ff6b4"},
		// Cluster-scoped: no namespace in the hashed string.
		{"ClusterRole", "system:test-role", "", "system.test-role-57bf8fbc66"},
		{"Namespace", "default", "", "default-5748775fcb"},
		// Upper case hashes as lower case; the prefix is lower-cased too.
		{"Deployment", "Nginx", "Default", "nginx-6c47d997fc"},
		{"ConfigMap", "a.b:c", "x", "a.b.c-5cd9956fff"},
	} {
		got := WorkName(c.kind, c.name, c.namespace)
		if got != c.want {
			t.Errorf("WorkName(%q, %q, %q) = %q, want %q", c.kind, c.name, c.namespace, got, c.want)
		}
		if k := karmadaWorkName(c.kind, c.name, c.namespace); got != k {
			t.Errorf("WorkName(%q, %q, %q) = %q, Karmada's rule gives %q", c.kind, c.name, c.namespace, got, k)
		}
	}
	// A name as long as names go keeps the suffix and stays valid.
	got := WorkName("ConfigMap", long, "default")
	if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
		t.Errorf("WorkName of a %d-character name = %q, invalid: %v", len(long), got, errs)
	}
	if k := karmadaWorkName("ConfigMap", long, "default"); !strings.HasSuffix(got, k[strings.LastIndex(k, "-"):]) {
		t.Errorf("WorkName of a long name = %q, lost the suffix of %q", got, k)
	}
	if got := NamespaceWorkName("default"); got != "default-5748775fcb" {
		t.Errorf("NamespaceWorkName(default) = %q, want default-5748775fcb", got)
	}
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
