package webhook

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheme"
)

// admitAs admits obj (old on update) as user through the endpoint of path
// with the given authorizer (nil: none), returning the denial's causes.
func admitAs(t *testing.T, auth Authorizer, path string, user authenticationv1.UserInfo, obj, old client.Object) []string {
	t.Helper()
	for _, e := range EndpointsWith(scheme.Scheme, Options{Authorizer: auth}) {
		if e.Path == path {
			req := request(t, e, obj, old)
			req.UserInfo = user
			return denials(t, e.Handler().Handle(context.Background(), req))
		}
	}
	t.Fatalf("no endpoint %s", path)
	return nil
}

// conflictResolution: Overwrite takes over the members' own objects: the
// author needs the adopt verb on the policy's (or binding's) resource, in
// its namespace. Administrators have it; a tenant does not; a webhook that
// cannot ask refuses; controllers scheduling an Overwrite binding are not
// asked.
func TestOverwriteNeedsTheAdoptRight(t *testing.T) {
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}
	tenant := authenticationv1.UserInfo{Username: "tenant-a", Groups: []string{"system:authenticated"}}
	overwrite := pp(func(p *policyv1alpha1.PropagationPolicy) {
		p.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	})
	abort := validPP()
	auth := &testAuthorizer{}
	if got := admitAs(t, auth, ppPath, admin, overwrite, nil); got != nil {
		t.Errorf("an administrator's Overwrite policy denied: %v", got)
	}
	if d := cmp.Diff([]string{"policy.karmada.io/propagationpolicies/shop/adopt"}, asked(auth)); d != "" {
		t.Errorf("asked (-want,+got):\n%s", d)
	}
	want := `spec.conflictResolution: Forbidden: Overwrite takes over objects a member cluster made; tenant-a may not: it needs the "adopt" verb on propagationpolicies.policy.karmada.io in namespace shop, which a platform administrator grants (use Abort, the default, to leave the members' own objects alone)`
	if d := cmp.Diff([]string{want}, admitAs(t, auth, ppPath, tenant, overwrite, nil)); d != "" {
		t.Errorf("a tenant's Overwrite policy (-want,+got):\n%s", d)
	}
	if got := admitAs(t, auth, ppPath, tenant, abort, nil); got != nil {
		t.Errorf("a tenant's Abort policy denied: %v", got)
	}
	if got := admitAs(t, auth, ppPath, tenant, overwrite, abort); len(got) != 1 {
		t.Errorf("a tenant turning a policy to Overwrite: %v, want it denied", got)
	}
	// A change that leaves the spec alone (a label) asks nothing.
	relabelled := overwrite.DeepCopy()
	relabelled.Labels["team"] = "a"
	if got := admitAs(t, auth, ppPath, tenant, relabelled, overwrite); got != nil {
		t.Errorf("a tenant relabelling an administrator's Overwrite policy: %v", got)
	}
	// A new selector on an Overwrite policy would take over other objects.
	widened := overwrite.DeepCopy()
	widened.Spec.ResourceSelectors[0].Name = "other"
	if got := admitAs(t, auth, ppPath, tenant, widened, overwrite); len(got) != 1 {
		t.Errorf("a tenant changing an Overwrite policy's selector: %v, want it denied", got)
	}
	cppOverwrite := cpp(func(p *policyv1alpha1.ClusterPropagationPolicy) {
		p.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	})
	if got := admitAs(t, auth, cppPath, tenant, cppOverwrite, nil); len(got) != 1 || !strings.Contains(got[0], "clusterpropagationpolicies.policy.karmada.io,") {
		t.Errorf("a tenant's Overwrite ClusterPropagationPolicy: %v", got)
	}
	if got := admitAs(t, nil, ppPath, admin, overwrite, nil); len(got) != 1 || !strings.Contains(got[0], "runs without --kubeconfig") {
		t.Errorf("without an authorizer: %v, want Overwrite refused", got)
	}

	// Bindings: creating one with Overwrite, or turning one to it, needs the
	// right; the scheduler placing an Overwrite binding does not.
	rbOverwrite := rb(func(b *workv1alpha2.ResourceBinding) { b.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite })
	if got := admitAs(t, auth, rbPath, tenant, rbOverwrite, nil); len(got) != 1 || !strings.Contains(got[0], "resourcebindings.work.karmada.io in namespace") {
		t.Errorf("a tenant's Overwrite binding: %v", got)
	}
	placed := rbOverwrite.DeepCopy()
	placed.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 1}}
	scheduler := authenticationv1.UserInfo{Username: "tenant-like-scheduler"}
	if got := admitAs(t, auth, rbPath, scheduler, placed, rbOverwrite); got != nil {
		t.Errorf("placing an Overwrite binding: %v, want no adopt check", got)
	}
}

func asked(a *testAuthorizer) []string {
	var out []string
	for _, x := range a.asked {
		out = append(out, x.Group+"/"+x.Resource+"/"+x.Namespace+"/"+x.Verb)
	}
	return out
}

// A pull-mode cluster's agent may claim its Cluster (spec.id and its
// topology) and write its status, nothing else: not its labels, taints,
// region after the claim, or endpoint. Administrators may.
func TestAgentChangesOfItsCluster(t *testing.T) {
	agent := authenticationv1.UserInfo{Username: "system:karmada:agent:member3", Groups: []string{"system:karmada:agents", "system:karmada:agent-registration:0123456789abcdef0123456789abcdef"}}
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}
	unclaimed := cluster(func(c *clusterv1alpha1.Cluster) {
		c.Name = "member3"
		c.Spec.SyncMode = clusterv1alpha1.Pull
		c.Spec.APIEndpoint, c.Spec.SecretRef, c.Spec.ID = "", nil, ""
	})
	claimed := unclaimed.DeepCopy()
	claimed.Spec.ID, claimed.Spec.Region, claimed.Spec.Zones = "kube-system-uid", "eu-west-1", []string{"eu-west-1a"}
	if got := admitAs(t, nil, clPath, agent, claimed, unclaimed); got != nil {
		t.Errorf("the agent claiming its Cluster: %v", got)
	}
	for _, c := range []struct {
		what   string
		change func(*clusterv1alpha1.Cluster)
		want   string
	}{
		{"remove a taint", func(c *clusterv1alpha1.Cluster) { c.Spec.Taints = nil }, "spec.taints: Forbidden"},
		{"add a label", func(c *clusterv1alpha1.Cluster) { c.Labels = map[string]string{"attract": "yes"} }, "metadata.labels: Forbidden"},
		{"move its region after the claim", func(c *clusterv1alpha1.Cluster) { c.Spec.Region = "elsewhere" }, "spec.region: Forbidden"},
		{"change its endpoint", func(c *clusterv1alpha1.Cluster) { c.Spec.APIEndpoint = "https://198.51.100.1:6443" }, "spec.apiEndpoint: Forbidden"},
		{"annotate itself", func(c *clusterv1alpha1.Cluster) { c.Annotations = map[string]string{"x": "y"} }, "metadata.annotations: Forbidden"},
	} {
		old := claimed.DeepCopy()
		old.Spec.Taints = []corev1.Taint{{Key: "quarantine", Effect: corev1.TaintEffectNoExecute}}
		changed := old.DeepCopy()
		c.change(changed)
		got := admitAs(t, nil, clPath, agent, changed, old)
		if len(got) != 1 || !strings.HasPrefix(got[0], c.want) || !strings.Contains(got[0], "system:karmada:agent:member3") {
			t.Errorf("the agent trying to %s: %v, want a denial %q naming the agent", c.what, got, c.want)
		}
		if got := admitAs(t, nil, clPath, admin, changed, old); got != nil {
			t.Errorf("an administrator trying to %s: %v", c.what, got)
		}
	}
}
