// Package integration tests the Karmada API as a real kube-apiserver serves it
// from this project's CRDs.
package integration

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

func TestAPI(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()

	// Every core kind round-trips with all fields intact; the objects stay
	// until the end of this test for the subtests below.
	testenv.RoundTrip(ctx, t, env.Client, testenv.CoreObjects("default", "-rt"))

	t.Run("defaults are applied", func(t *testing.T) {
		pp := &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: "default"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
				Placement:         policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{}},
				Failover:          &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{}},
			},
		}
		if err := env.Client.Create(ctx, pp); err != nil {
			t.Fatal(err)
		}
		got := &policyv1alpha1.PropagationPolicy{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pp), got); err != nil {
			t.Fatal(err)
		}
		s := got.Spec
		checks := []struct {
			field, got, want string
		}{
			{"conflictResolution", string(s.ConflictResolution), "Abort"},
			{"preemption", string(s.Preemption), "Never"},
			{"schedulerName", s.SchedulerName, "default-scheduler"},
			{"replicaSchedulingType", string(s.Placement.ReplicaScheduling.ReplicaSchedulingType), "Divided"},
			{"failover.application.purgeMode", string(s.Failover.Application.PurgeMode), "Gracefully"},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s defaulted to %q, want %q", c.field, c.got, c.want)
			}
		}
		if s.Priority == nil || *s.Priority != 0 {
			t.Errorf("priority defaulted to %v, want 0", s.Priority)
		}
		if tol := s.Failover.Application.DecisionConditions.TolerationSeconds; tol == nil || *tol != 300 {
			t.Errorf("decisionConditions.tolerationSeconds defaulted to %v, want 300", tol)
		}
	})

	t.Run("invalid policies are rejected naming the field", func(t *testing.T) {
		cases := []struct {
			name     string
			spec     policyv1alpha1.PropagationSpec
			wantPath string
		}{
			{"no resource selectors", policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{}}, "spec.resourceSelectors"},
			{"bad conflict resolution", policyv1alpha1.PropagationSpec{
				ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
				ConflictResolution: "Replace",
			}, "spec.conflictResolution"},
			{"unknown spread field", policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
				Placement:         policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: "country"}}},
			}, "spec.placement.spreadConstraints[0].spreadByField"},
			{"zero static weight", policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
				Placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{{Weight: 0}}},
				}},
			}, "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight"},
		}
		for i, c := range cases {
			pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bad-" + string(rune('a'+i)), Namespace: "default"}, Spec: c.spec}
			err := env.Client.Create(ctx, pp)
			if err == nil {
				t.Errorf("%s: accepted, want rejection", c.name)
				continue
			}
			if !strings.Contains(err.Error(), c.wantPath) {
				t.Errorf("%s: error %q does not name %s", c.name, err, c.wantPath)
			}
		}
	})

	t.Run("bindings are served as v1alpha1 too", func(t *testing.T) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("work.karmada.io/v1alpha1")
		u.SetKind("ResourceBinding")
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment-rt"}, u); err != nil {
			t.Fatalf("reading the binding as v1alpha1: %v", err)
		}
		name, _, _ := unstructured.NestedString(u.Object, "spec", "resource", "name")
		if name != "nginx" {
			t.Errorf("v1alpha1 spec.resource.name = %q, want nginx", name)
		}
	})

	t.Run("short names and scopes match Karmada", func(t *testing.T) {
		dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]struct {
			short      string
			namespaced bool
		}{
			"policy.karmada.io/v1alpha1/propagationpolicies":        {"pp", true},
			"policy.karmada.io/v1alpha1/clusterpropagationpolicies": {"cpp", false},
			"policy.karmada.io/v1alpha1/overridepolicies":           {"op", true},
			"policy.karmada.io/v1alpha1/clusteroverridepolicies":    {"cop", false},
			"work.karmada.io/v1alpha2/resourcebindings":             {"rb", true},
			"work.karmada.io/v1alpha2/clusterresourcebindings":      {"crb", false},
			"work.karmada.io/v1alpha1/works":                        {"wk", true},
			"cluster.karmada.io/v1alpha1/clusters":                  {"", false},
		}
		for key, w := range want {
			i := strings.LastIndex(key, "/")
			list, err := dc.ServerResourcesForGroupVersion(key[:i])
			if err != nil {
				t.Fatalf("discovery of %s: %v", key[:i], err)
			}
			found := false
			for _, r := range list.APIResources {
				if r.Name != key[i+1:] {
					continue
				}
				found = true
				if got := strings.Join(r.ShortNames, ","); got != w.short {
					t.Errorf("%s short names %q, want %q", key, got, w.short)
				}
				if r.Namespaced != w.namespaced {
					t.Errorf("%s namespaced=%v, want %v", key, r.Namespaced, w.namespaced)
				}
			}
			if !found {
				t.Errorf("%s is not served", key)
			}
		}
	})
}
