package events

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBindingWords(t *testing.T) {
	if got := BindingWords(&metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"}); got != "ResourceBinding(shop/web-deployment)" {
		t.Errorf("namespaced: %q", got)
	}
	if got := BindingWords(&metav1.ObjectMeta{Name: "reader-clusterrole"}); got != "ClusterResourceBinding(reader-clusterrole)" {
		t.Errorf("cluster-scoped: %q", got)
	}
}
