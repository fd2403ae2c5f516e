package webhook

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

// TestDenialStatus: a denial is the API server's Invalid status, with the
// kind, the name and a message that lists every cause.
func TestDenialStatus(t *testing.T) {
	e := endpoints[opPath]
	o := op(func(o *policyv1alpha1.OverridePolicy) {
		overriders(o).Plaintext[0].Path = "/metadata/namespace"
	})
	resp := e.Handler().Handle(context.Background(), request(t, e, o, nil))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 422 || resp.Result.Reason != metav1.StatusReasonInvalid {
		t.Fatalf("want a 422 Invalid denial, got %+v", resp.AdmissionResponse)
	}
	want := `OverridePolicy.policy.karmada.io "web-op" is invalid: spec.overrideRules[0].overriders.plaintext[0].path: Forbidden: "/metadata/namespace" would change metadata.namespace`
	if !strings.HasPrefix(resp.Result.Message, want) {
		t.Fatalf("message %q\nwant it to start with %q", resp.Result.Message, want)
	}
}

// TestDeleteIsAllowed: deletions are not validated.
func TestDeleteIsAllowed(t *testing.T) {
	e := endpoints[ppPath]
	req := request(t, e, pp(func(p *policyv1alpha1.PropagationPolicy) { p.Labels = nil }), nil)
	req.Operation = admissionv1.Delete
	if resp := e.Handler().Handle(context.Background(), req); !resp.Allowed {
		t.Fatalf("delete denied: %+v", resp.Result)
	}
}

// TestClusterIDIsUnique: a Cluster may not take the spec.id another Cluster
// has (the same member under a second name); its own id, unchanged, is
// fine, and without a reader the check is off.
func TestClusterIDIsUnique(t *testing.T) {
	existing := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, ID: "uid-2"}}
	reader := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(existing).Build()
	var e Endpoint
	for _, x := range EndpointsWith(scheme.Scheme, Options{Clusters: reader}) {
		if x.Path == "/validate-cluster" {
			e = x
		}
	}
	pull := func(name, id string) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ID: id}}
	}
	resp := e.Handler().Handle(context.Background(), request(t, e, pull("e2e-pull", "uid-2"), pull("e2e-pull", "")))
	got := denials(t, resp)
	if len(got) != 1 || !strings.Contains(got[0], `spec.id: Invalid value: "uid-2": the member is already cluster "member2"`) {
		t.Errorf("a second name for member2's id: %v", got)
	}
	for _, ok := range []struct{ obj, old *clusterv1alpha1.Cluster }{
		{pull("edge", "uid-9"), pull("edge", "")},
		{pull("edge", "uid-9"), nil},
		{existing, existing.DeepCopy()},
	} {
		if resp := e.Handler().Handle(context.Background(), request(t, e, ok.obj, ok.old)); !resp.Allowed {
			t.Errorf("%s with id %s denied: %+v", ok.obj.Name, ok.obj.Spec.ID, resp.Result)
		}
	}
	plain := endpoints["/validate-cluster"]
	if resp := plain.Handler().Handle(context.Background(), request(t, plain, pull("e2e-pull", "uid-2"), pull("e2e-pull", ""))); !resp.Allowed {
		t.Errorf("without a reader the id check should be off: %+v", resp.Result)
	}
}

// TestClusterTaintPolicyRules: the rules of a ClusterTaintPolicy, with the
// exact causes; NoExecute only with --allow-no-execute-taint-policy.
func TestClusterTaintPolicyRules(t *testing.T) {
	const path = "/validate-clustertaintpolicy"
	ctp := func(mutate func(*policyv1alpha1.ClusterTaintPolicy)) *policyv1alpha1.ClusterTaintPolicy {
		p := validCTP()
		mutate(p)
		return p
	}
	noExecute := ctp(func(p *policyv1alpha1.ClusterTaintPolicy) { p.Spec.Taints[0].Effect = corev1.TaintEffectNoExecute })
	for _, tc := range []ruleCase{
		{name: "valid", path: path, obj: validCTP()},
		{name: "NoExecute without the flag", path: path, obj: noExecute,
			want: []string{"spec.taints[0].effect: Forbidden: NoExecute evicts every workload on the cluster that does not tolerate it; karmada-webhook allows it only with --allow-no-execute-taint-policy"}},
		{name: "an unknown effect", path: path, obj: ctp(func(p *policyv1alpha1.ClusterTaintPolicy) { p.Spec.Taints[0].Effect = "PreferNoSchedule" }),
			want: []string{`spec.taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoSchedule", "NoExecute"`}},
		{name: "no taints", path: path, obj: ctp(func(p *policyv1alpha1.ClusterTaintPolicy) { p.Spec.Taints = nil }),
			want: []string{"spec.taints: Required value: at least one taint"}},
		{name: "the same taint twice", path: path, obj: ctp(func(p *policyv1alpha1.ClusterTaintPolicy) { p.Spec.Taints = append(p.Spec.Taints, p.Spec.Taints[0]) }),
			want: []string{`spec.taints[1]: Duplicate value: "not-ready:NoSchedule (the same key and effect as spec.taints[0])"`}},
		{name: "no conditions", path: path, obj: ctp(func(p *policyv1alpha1.ClusterTaintPolicy) {
			p.Spec.AddOnConditions, p.Spec.RemoveOnConditions = nil, nil
		}),
			want: []string{"spec.addOnConditions: Required value: at least one of addOnConditions and removeOnConditions: without either the policy does nothing"}},
		{name: "a bad operator, status and empty type", path: path, obj: ctp(func(p *policyv1alpha1.ClusterTaintPolicy) {
			p.Spec.AddOnConditions[0] = policyv1alpha1.MatchCondition{Operator: "Exists", StatusValues: []metav1.ConditionStatus{"Maybe"}}
		}), want: []string{
			"spec.addOnConditions[0].conditionType: Required value: a Cluster status condition type, such as Ready",
			`spec.addOnConditions[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"`,
			`spec.addOnConditions[0].statusValues[0]: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"`,
		}},
		{name: "no status values", path: path, obj: ctp(func(p *policyv1alpha1.ClusterTaintPolicy) { p.Spec.RemoveOnConditions[0].StatusValues = nil }),
			want: []string{"spec.removeOnConditions[0].statusValues: Required value: at least one of True, False, Unknown"}},
		{name: "a bad key", path: path, obj: ctp(func(p *policyv1alpha1.ClusterTaintPolicy) { p.Spec.Taints[0].Key = "not ready" }),
			want: []string{`spec.taints[0].key: Invalid value: "not ready": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, admit(t, tc.path, tc.obj, tc.old)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
	for _, e := range EndpointsWith(scheme.Scheme, Options{AllowNoExecuteTaintPolicy: true}) {
		if e.Path == path {
			if resp := e.Handler().Handle(context.Background(), request(t, e, noExecute, nil)); !resp.Allowed {
				t.Errorf("NoExecute with --allow-no-execute-taint-policy denied: %+v", resp.Result)
			}
		}
	}
}
