package workloadrebalancer

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1alpha1 "github.com/karmada-go/karmada/api/apps/v1alpha1"
)

func TestCompareWorkloads(t *testing.T) {
	ref := func(apiVersion, kind, ns, name string) appsv1alpha1.ObjectReference {
		return appsv1alpha1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
	}
	in := []appsv1alpha1.ObjectReference{
		ref("v1", "Service", "b", "x"),
		ref("apps/v1", "StatefulSet", "a", "db"),
		ref("apps/v1", "Deployment", "b", "web"),
		ref("v1", "ConfigMap", "a", "z"),
		ref("apps/v1", "Deployment", "a", "web"),
		ref("apps/v1", "Deployment", "a", "api"),
		ref("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r"),
	}
	want := []appsv1alpha1.ObjectReference{
		ref("apps/v1", "Deployment", "a", "api"),
		ref("apps/v1", "Deployment", "a", "web"),
		ref("apps/v1", "Deployment", "b", "web"),
		ref("apps/v1", "StatefulSet", "a", "db"),
		ref("rbac.authorization.k8s.io/v1", "ClusterRole", "", "r"),
		ref("v1", "ConfigMap", "a", "z"),
		ref("v1", "Service", "b", "x"),
	}
	got := slices.Clone(in)
	slices.SortFunc(got, compareWorkloads)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("order (-want,+got):\n%s", d)
	}
}
