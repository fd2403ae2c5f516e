package overridemanager

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

func deployment() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{
	  "apiVersion": "apps/v1", "kind": "Deployment",
	  "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web", "tier": "front"}},
	  "spec": {"replicas": 2, "template": {"spec": {
	    "initContainers": [{"name": "init", "image": "busybox"}],
	    "containers": [
	      {"name": "web", "image": "docker.io/library/nginx:1.25", "command": ["nginx"], "args": ["-g", "daemon off;"]},
	      {"name": "side", "image": "localhost:5000/tools/agent@sha256:abc"}
	    ]}}}
	}`), &u.Object); err != nil {
		panic(err)
	}
	return u
}

func raw(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

func get(t *testing.T, u *unstructured.Unstructured, p string) any {
	t.Helper()
	v, err := getPointer(u.Object, p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return v
}

func TestParseImage(t *testing.T) {
	cases := map[string]Image{
		"nginx":                               {Repository: "nginx"},
		"nginx:1.25":                          {Repository: "nginx", Tag: "1.25"},
		"library/nginx":                       {Repository: "library/nginx"},
		"docker.io/library/nginx:1.25":        {Registry: "docker.io", Repository: "library/nginx", Tag: "1.25"},
		"localhost:5000/tools/agent@sha256:a": {Registry: "localhost:5000", Repository: "tools/agent", Digest: "sha256:a"},
		"localhost/agent:v1":                  {Registry: "localhost", Repository: "agent", Tag: "v1"},
	}
	for in, want := range cases {
		got := ParseImage(in)
		if got != want {
			t.Errorf("%s: %+v, want %+v", in, got, want)
		}
		if got.String() != in {
			t.Errorf("%s: joins back as %s", in, got.String())
		}
	}
}

func TestOverriders(t *testing.T) {
	c := containers
	cases := []struct {
		name  string
		o     policyv1alpha1.Overriders
		check func(t *testing.T, u *unstructured.Unstructured)
		err   string
	}{
		{"registry replaced in every container", policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "registry.member2.local"}}},
			func(t *testing.T, u *unstructured.Unstructured) {
				if got := c(u); got != "init=registry.member2.local/busybox web=registry.member2.local/library/nginx:1.25 side=registry.member2.local/tools/agent@sha256:abc" {
					t.Error(got)
				}
			}, ""},
		{"tag by predicate only", policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"}, Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "1.27"}}},
			func(t *testing.T, u *unstructured.Unstructured) {
				if got := c(u); got != "init=busybox web=docker.io/library/nginx:1.27 side=localhost:5000/tools/agent@sha256:abc" {
					t.Error(got)
				}
			}, ""},
		{"registry add appends, remove clears", policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/0/image"}, Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpAdd, Value: "-mirror"},
			{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/1/image"}, Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpRemove}}},
			func(t *testing.T, u *unstructured.Unstructured) {
				if got := c(u); got != "init=busybox web=docker.io-mirror/library/nginx:1.25 side=tools/agent@sha256:abc" {
					t.Error(got)
				}
			}, ""},
		{"predicate path that is not there", policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/5/image"}, Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "x"}}},
			nil, "imageOverrider[0]: path /spec/template/spec/containers/5/image: no index \"5\""},
		{"command add and args remove", policyv1alpha1.Overriders{
			CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"-c", "/etc/nginx.conf"}}},
			ArgsOverrider:    []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: policyv1alpha1.OverriderOpRemove, Value: []string{"daemon off;"}}}},
			func(t *testing.T, u *unstructured.Unstructured) {
				if diff := cmp.Diff([]any{"nginx", "-c", "/etc/nginx.conf"}, get(t, u, "/spec/template/spec/containers/0/command")); diff != "" {
					t.Error(diff)
				}
				if diff := cmp.Diff([]any{"-g"}, get(t, u, "/spec/template/spec/containers/0/args")); diff != "" {
					t.Error(diff)
				}
			}, ""},
		{"command replace is not an operator", policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: policyv1alpha1.OverriderOpReplace}}},
			nil, "commandOverrider[0]: operator \"replace\": must be add or remove"},
		{"labels add, replace only existing, remove", policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"env": "prod"}},
			{Operator: policyv1alpha1.OverriderOpReplace, Value: map[string]string{"tier": "back", "absent": "x"}},
			{Operator: policyv1alpha1.OverriderOpRemove, Value: map[string]string{"app": ""}}}},
			func(t *testing.T, u *unstructured.Unstructured) {
				if diff := cmp.Diff(map[string]string{"env": "prod", "tier": "back"}, u.GetLabels()); diff != "" {
					t.Error(diff)
				}
			}, ""},
		{"annotations add", policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"owner": "team-a"}}}},
			func(t *testing.T, u *unstructured.Unstructured) {
				if u.GetAnnotations()["owner"] != "team-a" {
					t.Error(u.GetAnnotations())
				}
			}, ""},
		{"plaintext replace and add", policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: raw("5")},
			{Path: "/metadata/labels/added", Operator: policyv1alpha1.OverriderOpAdd, Value: raw(`"yes"`)}}},
			func(t *testing.T, u *unstructured.Unstructured) {
				if get(t, u, "/spec/replicas") != int64(5) {
					t.Errorf("replicas %v", get(t, u, "/spec/replicas"))
				}
				if u.GetLabels()["added"] != "yes" {
					t.Error(u.GetLabels())
				}
			}, ""},
		{"plaintext remove of a missing path", policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/nothing", Operator: policyv1alpha1.OverriderOpRemove}}},
			nil, "plaintext: remove /spec/nothing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := deployment()
			err := applyOverriders(u, &tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, u)
		})
	}
}

func containers(u *unstructured.Unstructured) string {
	var out []string
	for _, list := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", list)
		for _, c := range cs {
			m := c.(map[string]any)
			out = append(out, m["name"].(string)+"="+m["image"].(string))
		}
	}
	return strings.Join(out, " ")
}

func TestFieldOverrider(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg", "namespace": "shop"},
		"data": map[string]any{
			"config.json": `{"db":{"host":"db.local","port":5432}}`,
			"app.yaml":    "server:\n  replicas: 1\n  name: a\n",
		},
	}}
	o := policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{
		{FieldPath: "/data/config.json", JSON: []policyv1alpha1.PatchOperation{{SubPath: "/db/host", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`"db.member2"`)}}},
		{FieldPath: "/data/app.yaml", YAML: []policyv1alpha1.PatchOperation{
			{SubPath: "/server/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: raw("3")},
			{SubPath: "/server/name", Operator: policyv1alpha1.OverriderOpRemove}}},
	}}
	if err := applyOverriders(cm, &o); err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if data["config.json"] != `{"db":{"host":"db.member2","port":5432}}` {
		t.Errorf("json field: %s", data["config.json"])
	}
	if data["app.yaml"] != "server:\n  replicas: 3\n" {
		t.Errorf("yaml field: %q", data["app.yaml"])
	}
	bad := policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/app.yaml", JSON: []policyv1alpha1.PatchOperation{{SubPath: "/x", Operator: policyv1alpha1.OverriderOpRemove}}}}}
	if err := applyOverriders(cm, &bad); err == nil || !strings.Contains(err.Error(), "fieldOverrider[0] (fieldPath /data/app.yaml): the field does not hold valid JSON") {
		t.Errorf("error %v", err)
	}
}

func TestMatchingOrderAndTargets(t *testing.T) {
	tmpl := deployment()
	byKind := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byName := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	label := func(k, v string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{k: v}}}}
	}
	op := func(ns, name string, sel []policyv1alpha1.ResourceSelector, target *policyv1alpha1.ClusterAffinity, o policyv1alpha1.Overriders) policyv1alpha1.OverridePolicy {
		return policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: sel, OverrideRules: []policyv1alpha1.RuleWithCluster{{TargetCluster: target, Overriders: o}}}}
	}
	ops := []policyv1alpha1.OverridePolicy{
		op("shop", "a-by-name", []policyv1alpha1.ResourceSelector{byName}, nil, label("who", "a-by-name")),
		op("shop", "b-by-kind", []policyv1alpha1.ResourceSelector{byKind}, nil, label("who", "b-by-kind")),
		op("other", "elsewhere", nil, nil, label("who", "elsewhere")),
		op("shop", "c-member2", nil, &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, label("m2", "yes")),
	}
	cops := []policyv1alpha1.ClusterOverridePolicy{{ObjectMeta: metav1.ObjectMeta{Name: "global"}, Spec: policyv1alpha1.OverrideSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{byName}, Overriders: label("who", "global")}}}

	ps := Matching(tmpl, ops, cops)
	var keys []string
	for _, p := range ps {
		keys = append(keys, p.Key())
	}
	if diff := cmp.Diff([]string{"global", "shop/c-member2", "shop/b-by-kind", "shop/a-by-name"}, keys); diff != "" {
		t.Fatalf("order (-want,+got):\n%s", diff)
	}
	m1 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	cl, nsd, err := Apply(tmpl, m1, ps)
	if err != nil {
		t.Fatal(err)
	}
	// The most specific policy applies last and wins.
	if tmpl.GetLabels()["who"] != "a-by-name" || tmpl.GetLabels()["m2"] != "" {
		t.Errorf("labels for member1 %v", tmpl.GetLabels())
	}
	if len(cl) != 1 || cl[0].PolicyName != "global" || len(nsd) != 2 {
		t.Errorf("applied %+v / %+v, want global, then the two namespaced ones targeting member1", cl, nsd)
	}
	v, _ := AnnotationValue(nsd)
	if !strings.Contains(v, `"policyName":"shop/b-by-kind"`) {
		t.Errorf("annotation %s", v)
	}
	m2 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
	tmpl2 := deployment()
	if _, _, err := Apply(tmpl2, m2, ps); err != nil || tmpl2.GetLabels()["m2"] != "yes" {
		t.Errorf("member2's rule not applied: %v %v", tmpl2.GetLabels(), err)
	}
	// A failure names the policy and the rule.
	bad := []Policy{{Namespace: "shop", Name: "broken", Spec: &policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/x/y", Operator: policyv1alpha1.OverriderOpReplace, Value: raw("1")}}}}}}}}
	if _, _, err := Apply(deployment(), m1, bad); err == nil || !strings.Contains(err.Error(), "OverridePolicy shop/broken, overrideRules[0]: plaintext: replace /spec/x/y") {
		t.Errorf("error %v", err)
	}
}

// No overrider may change which object a manifest is: the rule fails,
// naming the policy, the rule, the field and both values.
func TestApplyKeepsIdentity(t *testing.T) {
	m1 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	plaintext := func(path, op, value string) []Policy {
		o := policyv1alpha1.PlaintextOverrider{Path: path, Operator: policyv1alpha1.OverriderOperator(op)}
		if value != "" {
			o.Value = raw(value)
		}
		return []Policy{{Namespace: "default", Name: "sneaky", Spec: &policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{
			{Overriders: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"ok": "yes"}}}}},
			{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{o}}},
		}}}}
	}
	for _, c := range []struct {
		name, path, op, value, want string
	}{
		{"namespace", "/metadata/namespace", "replace", `"kube-system"`, `metadata.namespace: changed from "shop" to "kube-system"`},
		{"kind", "/kind", "replace", `"ClusterRole"`, `kind: changed from "Deployment" to "ClusterRole"`},
		{"apiVersion", "/apiVersion", "replace", `"rbac.authorization.k8s.io/v1"`, `apiVersion: changed from "apps/v1" to "rbac.authorization.k8s.io/v1"`},
		{"name", "/metadata/name", "replace", `"other"`, `metadata.name: changed from "web" to "other"`},
		{"namespace removed", "/metadata/namespace", "remove", "", `metadata.namespace: changed from "shop" to unset`},
		{"generateName", "/metadata/generateName", "add", `"web-"`, `metadata.generateName: changed from unset to "web-"`},
		{"ownerReferences", "/metadata/ownerReferences", "add", `[{"apiVersion":"v1","kind":"Secret","name":"s","uid":"u"}]`, `metadata.ownerReferences: changed from unset to [`},
	} {
		_, _, err := Apply(deployment(), m1, plaintext(c.path, c.op, c.value))
		if err == nil || !strings.Contains(err.Error(), "OverridePolicy default/sneaky, overrideRules[1]: "+c.want) || !strings.Contains(err.Error(), "overriders may not change") {
			t.Errorf("%s: error %v, want one naming the rule and %s", c.name, err, c.want)
		}
	}
	// Changing other metadata is fine.
	if _, _, err := Apply(deployment(), m1, plaintext("/metadata/labels/tier", "add", `"web"`)); err != nil {
		t.Errorf("a label overrider was refused: %v", err)
	}
}
