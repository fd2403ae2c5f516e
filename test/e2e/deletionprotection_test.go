//go:build e2e

package e2e

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// A template labelled resourcetemplate.karmada.io/deletion-protected: Always
// is not deleted: kubectl delete fails with Karmada's words and exit code,
// the template and its member copy stay; once the label is removed the
// deletion goes through and the copy goes with it.
func TestDeletionProtectedTemplate(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("protected", 1)
	d.Labels = map[string]string{workv1alpha2.DeletionProtectionLabel: workv1alpha2.DeletionProtectionAlways}
	propagate(ctx, t, d, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}})
	kubectl := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "kubectl"), append([]string{"--kubeconfig", fleet.Kubeconfig, "--context", "karmada-apiserver"}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Whatever happens, the label goes before propagate's cleanup deletes.
	t.Cleanup(func() { _, _ = kubectl("label", "deployment", "protected", workv1alpha2.DeletionProtectionLabel+"-") })
	waitMemberDeployment(ctx, t, "member1", "protected", 1)

	out, err := kubectl("delete", "deployment", "protected")
	var exit *exec.ExitError
	if err == nil || !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("kubectl delete of a protected template: %v\n%s", err, out)
	}
	want := `Error from server (Forbidden): admission webhook "resourcedeletionprotection.karmada.io" denied the request: This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected`
	if strings.TrimSpace(out) != want {
		t.Errorf("kubectl said:\n%s\nwant Karmada's:\n%s", out, want)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{}); err != nil {
		t.Fatalf("the protected template: %v", err)
	}
	if _, err := kube(t, "member1").AppsV1().Deployments("default").Get(ctx, "protected", metav1.GetOptions{}); err != nil {
		t.Fatalf("the protected template's copy in member1: %v", err)
	}

	// Another value protects nothing; unlabelled, the deletion goes
	// through and the copy follows.
	if out, err := kubectl("label", "--overwrite", "deployment", "protected", workv1alpha2.DeletionProtectionLabel+"=Never"); err != nil {
		t.Fatalf("kubectl label: %v\n%s", err, out)
	}
	if out, err := kubectl("delete", "deployment", "protected"); err != nil {
		t.Fatalf("kubectl delete of an unprotected template: %v\n%s", err, out)
	}
	waitMemberDeployment(ctx, t, "member1", "protected", -1)
}
