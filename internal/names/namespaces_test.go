package names

import "testing"

func TestReservedNamespace(t *testing.T) {
	cases := map[string]bool{
		"kube-system": true, "kube-public": true, "kube-node-lease": true, "kube-flannel": true,
		"karmada-system": true, "karmada-cluster": true, "karmada-es-member1": true,
		"default": false, "kubeflow": false, "team-a": false, "karmadafoo": false,
		// Karmada reserves only its own namespaces of that prefix.
		"karmada-demo": false, "karmada-es-": false, "karmada-systems": false,
	}
	for ns, want := range cases {
		if got := ReservedNamespace(ns); got != want {
			t.Errorf("ReservedNamespace(%q) = %v, want %v", ns, got, want)
		}
	}
	if !EveryMemberHas("default") || EveryMemberHas("team-a") {
		t.Error("EveryMemberHas: only default is in every member")
	}
}

func TestControlPlaneNamespace(t *testing.T) {
	cases := map[string]bool{
		"karmada-system": true, "karmada-cluster": true, "karmada-es-member1": true,
		"karmada-es-": false, "karmada-foo": false, "kube-system": false, "default": false, "shop": false,
	}
	for ns, want := range cases {
		if got := ControlPlaneNamespace(ns); got != want {
			t.Errorf("ControlPlaneNamespace(%q) = %v, want %v", ns, got, want)
		}
	}
}
