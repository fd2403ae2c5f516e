package policymatch

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

func deployment(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func TestSelectorMatches(t *testing.T) {
	web := deployment("shop", "web", map[string]string{"app": "web"})
	sel := func(mod func(*policyv1alpha1.ResourceSelector)) policyv1alpha1.ResourceSelector {
		s := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
		mod(&s)
		return s
	}
	cases := []struct {
		name      string
		sel       policyv1alpha1.ResourceSelector
		defaultNS string
		want      Specificity
	}{
		{"kind only", sel(func(*policyv1alpha1.ResourceSelector) {}), "", MatchKind},
		{"other apiVersion", sel(func(s *policyv1alpha1.ResourceSelector) { s.APIVersion = "apps/v1beta1" }), "", NoMatch},
		{"other kind", sel(func(s *policyv1alpha1.ResourceSelector) { s.Kind = "StatefulSet" }), "", NoMatch},
		{"by name", sel(func(s *policyv1alpha1.ResourceSelector) { s.Name = "web" }), "", MatchName},
		{"other name", sel(func(s *policyv1alpha1.ResourceSelector) { s.Name = "api" }), "", NoMatch},
		{"by labels", sel(func(s *policyv1alpha1.ResourceSelector) {
			s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		}), "", MatchLabelSelector},
		{"other labels", sel(func(s *policyv1alpha1.ResourceSelector) {
			s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
		}), "", NoMatch},
		{"name wins over labels", sel(func(s *policyv1alpha1.ResourceSelector) {
			s.Name = "web"
			s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
		}), "", MatchName},
		{"explicit other namespace", sel(func(s *policyv1alpha1.ResourceSelector) { s.Namespace = "dev" }), "", NoMatch},
		{"policy's own namespace by default", sel(func(*policyv1alpha1.ResourceSelector) {}), "shop", MatchKind},
		{"another policy namespace", sel(func(*policyv1alpha1.ResourceSelector) {}), "dev", NoMatch},
	}
	for _, c := range cases {
		got, err := SelectorMatches(c.sel, web, c.defaultNS)
		if err != nil || got != c.want {
			t.Errorf("%s: %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}

func pp(ns, name string, prio int32, preempt policyv1alpha1.PreemptionBehavior, sels ...policyv1alpha1.ResourceSelector) policyv1alpha1.PropagationPolicy {
	return policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: sels, Priority: ptr.To(prio), Preemption: preempt}}
}

func cpp(name string, prio int32, preempt policyv1alpha1.PreemptionBehavior, sels ...policyv1alpha1.ResourceSelector) policyv1alpha1.ClusterPropagationPolicy {
	return policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: sels, Priority: ptr.To(prio), Preemption: preempt}}
}

var (
	byKind   = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byName   = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	byLabels = policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
)

func TestBestPolicy(t *testing.T) {
	web := deployment("shop", "web", map[string]string{"app": "web"})
	cases := []struct {
		name string
		pps  []policyv1alpha1.PropagationPolicy
		cpps []policyv1alpha1.ClusterPropagationPolicy
		want string
	}{
		{"none", nil, nil, ""},
		{"namespaced beats cluster, whatever the priority", []policyv1alpha1.PropagationPolicy{pp("shop", "low", 0, "", byKind)},
			[]policyv1alpha1.ClusterPropagationPolicy{cpp("high", 100, "", byName)}, "shop/low"},
		{"a policy of another namespace does not match", []policyv1alpha1.PropagationPolicy{pp("dev", "other", 0, "", byName)},
			[]policyv1alpha1.ClusterPropagationPolicy{cpp("c", 0, "", byKind)}, "c"},
		{"higher priority wins", []policyv1alpha1.PropagationPolicy{pp("shop", "a", 1, "", byName), pp("shop", "b", 2, "", byKind)}, nil, "shop/b"},
		{"then name beats labels beats kind", []policyv1alpha1.PropagationPolicy{pp("shop", "k", 0, "", byKind), pp("shop", "l", 0, "", byLabels), pp("shop", "n", 0, "", byName)}, nil, "shop/n"},
		{"labels beat kind", []policyv1alpha1.PropagationPolicy{pp("shop", "k", 0, "", byKind), pp("shop", "l", 0, "", byLabels)}, nil, "shop/l"},
		{"then the name in order", []policyv1alpha1.PropagationPolicy{pp("shop", "zeta", 0, "", byKind), pp("shop", "alpha", 0, "", byKind)}, nil, "shop/alpha"},
		{"cluster policies compare the same way", nil, []policyv1alpha1.ClusterPropagationPolicy{cpp("b", 0, "", byKind), cpp("a", 0, "", byKind), cpp("c", 0, "", byLabels)}, "c"},
	}
	for _, c := range cases {
		best, ok := Best(Candidates(web, c.pps, c.cpps))
		got := ""
		if ok {
			got = best.Key()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestClusterScopedTemplatesOnlyMatchClusterPolicies(t *testing.T) {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("team")
	sel := policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Namespace"}
	cands := Candidates(ns, []policyv1alpha1.PropagationPolicy{pp("", "p", 0, "", sel)}, []policyv1alpha1.ClusterPropagationPolicy{cpp("c", 0, "", sel)})
	if len(cands) != 1 || cands[0].Key() != "c" {
		t.Fatalf("candidates %v, want only the ClusterPropagationPolicy", cands)
	}
}

func TestChooseKeepsClaimsUnlessPreempted(t *testing.T) {
	web := deployment("shop", "web", map[string]string{"app": "web"})
	ppClaim := Claim{Namespaced: true, Namespace: "shop", Name: "old"}
	cppClaim := Claim{Name: "old"}
	cases := []struct {
		name    string
		claim   Claim
		claimed bool
		pps     []policyv1alpha1.PropagationPolicy
		cpps    []policyv1alpha1.ClusterPropagationPolicy
		want    string
	}{
		{"unclaimed: the best", Claim{}, false, []policyv1alpha1.PropagationPolicy{pp("shop", "old", 0, "", byKind), pp("shop", "new", 5, "", byKind)}, nil, "shop/new"},
		{"claimed: a better policy without preemption waits", ppClaim, true, []policyv1alpha1.PropagationPolicy{pp("shop", "old", 0, "", byKind), pp("shop", "new", 5, "", byName)}, nil, "shop/old"},
		{"claimed: higher priority with preemption takes it", ppClaim, true, []policyv1alpha1.PropagationPolicy{pp("shop", "old", 0, "", byKind), pp("shop", "new", 5, policyv1alpha1.PreemptAlways, byKind)}, nil, "shop/new"},
		{"claimed: equal priority with preemption does not", ppClaim, true, []policyv1alpha1.PropagationPolicy{pp("shop", "old", 0, "", byKind), pp("shop", "new", 0, policyv1alpha1.PreemptAlways, byName)}, nil, "shop/old"},
		{"a namespaced policy with preemption takes from a cluster policy", cppClaim, true, []policyv1alpha1.PropagationPolicy{pp("shop", "new", 0, policyv1alpha1.PreemptAlways, byKind)}, []policyv1alpha1.ClusterPropagationPolicy{cpp("old", 9, "", byName)}, "shop/new"},
		{"a cluster policy never takes from a namespaced one", ppClaim, true, []policyv1alpha1.PropagationPolicy{pp("shop", "old", 0, "", byKind)}, []policyv1alpha1.ClusterPropagationPolicy{cpp("new", 9, policyv1alpha1.PreemptAlways, byName)}, "shop/old"},
		{"a claim whose policy no longer matches is released", ppClaim, true, []policyv1alpha1.PropagationPolicy{pp("shop", "old", 0, "", policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap"}), pp("shop", "new", 0, "", byKind)}, nil, "shop/new"},
		{"nothing matches any more", ppClaim, true, nil, nil, ""},
	}
	for _, c := range cases {
		got, ok := Choose(c.claim, c.claimed, Candidates(web, c.pps, c.cpps), true)
		key := ""
		if ok {
			key = got.Key()
		}
		if key != c.want {
			t.Errorf("%s: %q, want %q", c.name, key, c.want)
		}
	}
	// Preemption off (PropagationPolicyPreemption, Karmada's default): a
	// claimed template stays, whatever the candidate's preemption.
	got, _ := Choose(ppClaim, true, Candidates(web, []policyv1alpha1.PropagationPolicy{pp("shop", "old", 0, "", byKind), pp("shop", "new", 5, policyv1alpha1.PreemptAlways, byKind)}, nil), false)
	if got.Key() != "shop/old" {
		t.Errorf("preemption off: %q took the template", got.Key())
	}
}

func TestClaimOf(t *testing.T) {
	web := deployment("shop", "web", nil)
	if _, ok := ClaimOf(web); ok {
		t.Fatal("an unannotated template reads as claimed")
	}
	web.SetAnnotations(map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop", policyv1alpha1.PropagationPolicyNameAnnotation: "pp"})
	if c, ok := ClaimOf(web); !ok || !c.Namespaced || c.Namespace != "shop" || c.Name != "pp" {
		t.Fatalf("claim %+v, want shop/pp", c)
	}
}

func TestClaimChanges(t *testing.T) {
	have := map[string]string{
		policyv1alpha1.ClusterPropagationPolicyAnnotation:       "old",
		policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "id-old",
		"app": "web",
	}
	pp := &Candidate{Namespaced: true, Namespace: "shop", Name: "pp", PermanentID: "id-pp"}
	annotations, labels := ClaimChanges(pp)
	gotA := MergePatch(have, annotations)
	wantA := map[string]any{policyv1alpha1.ClusterPropagationPolicyAnnotation: nil, policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop", policyv1alpha1.PropagationPolicyNameAnnotation: "pp"}
	if !reflect.DeepEqual(gotA, wantA) {
		t.Errorf("annotation patch %v, want %v", gotA, wantA)
	}
	gotL := MergePatch(have, labels)
	wantL := map[string]any{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: nil, policyv1alpha1.PropagationPolicyPermanentIDLabel: "id-pp"}
	if !reflect.DeepEqual(gotL, wantL) {
		t.Errorf("label patch %v, want %v", gotL, wantL)
	}
	// Already in place: nothing to patch.
	done := map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop", policyv1alpha1.PropagationPolicyNameAnnotation: "pp", policyv1alpha1.PropagationPolicyPermanentIDLabel: "id-pp"}
	if p := MergePatch(done, annotations); p != nil {
		t.Errorf("patch %v for a template already claimed", p)
	}
	if p := MergePatch(done, labels); p != nil {
		t.Errorf("label patch %v for a template already labelled", p)
	}
	// Released: every claim key goes, other keys stay untouched.
	a, l := ClaimChanges(nil)
	if p := MergePatch(done, a); len(p) != 2 {
		t.Errorf("release patch %v, want both annotations removed", p)
	}
	if p := MergePatch(have, l); !reflect.DeepEqual(p, map[string]any{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: nil}) {
		t.Errorf("release label patch %v", p)
	}
}
