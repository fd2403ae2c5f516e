//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/karmada-go/karmada/internal/controllers/tokenrenewal"
)

// The identity Karmada acts as in a member (joined without --cluster-admin)
// cannot read the member's Secrets, kube-system's included, and holds an
// expiring token; it can do what propagation needs.
func TestMemberIdentityHasLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	secret, err := kube(t, "karmada-apiserver").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := string(secret.Data["token"])
	claims, ok := tokenrenewal.ParseToken(token)
	if !ok || time.Until(time.Unix(claims.Expiry, 0)) > 25*time.Hour {
		t.Errorf("member1's token is not a bound token expiring within a day: %+v (parsed %t)", claims, ok)
	}
	cfg := restConfig(t, "member1")
	cfg = &rest.Config{Host: cfg.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, Timeout: 5 * time.Second}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets in member1's kube-system: want Forbidden, got %v", err)
	}
	if _, err := kc.CoreV1().Secrets("karmada-cluster").Get(ctx, "karmada-member1-token", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading a Secret in member1's karmada-cluster: want Forbidden, got %v", err)
	}
	if _, err := kc.AppsV1().Deployments("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing Deployments: %v", err)
	}
	if _, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing Nodes: %v", err)
	}
}
