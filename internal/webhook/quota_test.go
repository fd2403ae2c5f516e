package webhook

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheme"
)

func TestValidateFederatedResourceQuota(t *testing.T) {
	if errs := validateFederatedResourceQuota(validFRQ()); len(errs) != 0 {
		t.Fatalf("valid quota refused: %v", errs)
	}
	q := validFRQ()
	q.Spec.Overall[corev1.ResourceMemory] = resource.MustParse("-1Gi")
	q.Spec.StaticAssignments = append(q.Spec.StaticAssignments, policyv1alpha1.StaticClusterAssignment{ClusterName: "member1", Hard: corev1.ResourceList{}},
		policyv1alpha1.StaticClusterAssignment{Hard: corev1.ResourceList{}})
	errs := validateFederatedResourceQuota(q)
	got := errs.ToAggregate().Error()
	for _, want := range []string{"spec.overall[memory]", "spec.staticAssignments[1].clusterName: Duplicate", "spec.staticAssignments[2].clusterName: Required"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q do not name %s", got, want)
		}
	}
}

// A placement that fits is admitted and recorded in the quota's status; the
// next one that would go past overall is refused naming the quota and the
// numbers; taking replicas away is always admitted.
func TestQuotaCheck(t *testing.T) {
	q := validFRQ()
	q.Spec.Overall["requests.memory"] = resource.MustParse("4Gi")
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(q).WithStatusSubresource(q).Build()
	o := Options{Quotas: c}
	ctx := context.Background()
	placement := func(cpu string, replicas ...int32) *workv1alpha2.ResourceBindingSpec {
		s := &workv1alpha2.ResourceBindingSpec{ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("512Mi")}}}
		for i, r := range replicas {
			s.Clusters = append(s.Clusters, workv1alpha2.TargetCluster{Name: []string{"member1", "member2"}[i], Replicas: r})
		}
		return s
	}
	if errs, err := o.quotaCheck(ctx, "shop", placement("1", 4, 2), nil); err != nil || len(errs) != 0 {
		t.Fatalf("6 cpu of 10: %v %v", errs, err)
	}
	got := &policyv1alpha1.FederatedResourceQuota{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(q), got); err != nil {
		t.Fatal(err)
	}
	if u := got.Status.OverallUsed[corev1.ResourceCPU]; u.String() != "6" {
		t.Fatalf("overallUsed cpu = %s, want 6", u.String())
	}
	if u := got.Status.OverallUsed["requests.memory"]; u.String() != "3Gi" {
		t.Fatalf("overallUsed requests.memory = %s, want 3Gi", u.String())
	}
	// Refused as Karmada refuses it: a plain denial with its words.
	errs, err := o.quotaCheck(ctx, "shop", placement("1", 3, 2), nil)
	var denied *denial
	if len(errs) != 0 || !errors.As(err, &denied) || denied.message != "FederatedResourceQuota(shop/team) exceeded for resource cpu: requested sum 11, limit 10." {
		t.Fatalf("11 cpu of 10: %v %v", errs, err)
	}
	// An update is charged only what it adds.
	if errs, err := o.quotaCheck(ctx, "shop", placement("1", 5, 2), placement("1", 4, 2)); err != nil || len(errs) != 0 {
		t.Fatalf("scaling from 6 to 7 with 6 recorded: %v %v", errs, err)
	}
	if errs, err := o.quotaCheck(ctx, "shop", placement("1", 1), placement("1", 5, 2)); err != nil || len(errs) != 0 {
		t.Fatalf("scaling down: %v %v", errs, err)
	}
	// Another namespace's quota does not apply.
	if errs, err := o.quotaCheck(ctx, "other", placement("1", 50), nil); err != nil || len(errs) != 0 {
		t.Fatalf("another namespace: %v %v", errs, err)
	}
}
