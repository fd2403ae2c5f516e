package names

import "testing"

func TestNames(t *testing.T) {
	if got := BindingName("Deployment", "nginx"); got != "nginx-deployment" {
		t.Errorf("BindingName = %q, want nginx-deployment", got)
	}
	a, b := WorkName("shop", "web-deployment"), WorkName("bank", "web-deployment")
	if a == b {
		t.Errorf("bindings of two namespaces share Work name %q", a)
	}
	if a != WorkName("shop", "web-deployment") {
		t.Error("WorkName is not stable")
	}
	if got := NamespaceWorkName("shop"); got != "namespace-shop" {
		t.Errorf("NamespaceWorkName = %q, want namespace-shop", got)
	}
}
