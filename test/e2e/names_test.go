//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// A template whose name is 60 characters (its binding's name, 71, is longer
// than a label value may be) propagates like any other.
func TestLongTemplateNamePropagates(t *testing.T) {
	ctx := context.Background()
	name := "long-" + strings.Repeat("n", 55)
	propagate(ctx, t, deploymentNamed(name, 1), policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}})
	rb := waitScheduled(ctx, t, name, 1)
	if rb.Name != name+"-deployment" {
		t.Errorf("binding named %q, want %q", rb.Name, name+"-deployment")
	}
	waitMemberDeployment(ctx, t, "member1", name, 1)
}
