package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/karmada-go/karmada/internal/registration/token"
	"github.com/karmada-go/karmada/internal/testenv"
)

// token create writes a bootstrap token Secret as Kubernetes reads it;
// list shows it; delete takes an id or a whole token.
func TestBootstrapTokens(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	kc := kubernetes.NewForConfigOrDie(env.Config)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	o := token.CreateOptions{TTL: 2 * time.Hour, Description: "edge site", Groups: []string{token.DefaultGroup}, Usages: []string{"signing", "authentication"}, Clock: clocktesting.NewFakePassiveClock(now)}
	tok, err := token.Create(ctx, kc, o)
	if err != nil {
		t.Fatal(err)
	}
	id, secret, _ := strings.Cut(tok, ".")
	s, err := kc.CoreV1().Secrets("kube-system").Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		bootstrapapi.BootstrapTokenIDKey: id, bootstrapapi.BootstrapTokenSecretKey: secret,
		bootstrapapi.BootstrapTokenExpirationKey:  "2026-11-23T14:00:00Z",
		bootstrapapi.BootstrapTokenDescriptionKey: "edge site",
		"usage-bootstrap-signing":                 "true", "usage-bootstrap-authentication": "true",
		bootstrapapi.BootstrapTokenExtraGroupsKey: token.DefaultGroup,
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("Secret key %s = %q, want %q", k, s.Data[k], v)
		}
	}
	if s.Type != bootstrapapi.SecretTypeBootstrapToken {
		t.Errorf("Secret type %q", s.Type)
	}
	// A token that never expires, for the list.
	forever, err := token.Create(ctx, kc, token.CreateOptions{Usages: []string{"signing"}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := token.List(ctx, kc)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("listed %d tokens, want 2: %+v", len(list), list)
	}
	for _, info := range list {
		switch info.Token {
		case tok:
			if info.Expires == nil || !info.Expires.Equal(now.Add(2*time.Hour)) || info.Description != "edge site" ||
				strings.Join(info.Usages, ",") != "authentication,signing" || strings.Join(info.Groups, ",") != token.DefaultGroup {
				t.Errorf("listed %+v", info)
			}
		case forever:
			if info.Expires != nil || strings.Join(info.Usages, ",") != "signing" {
				t.Errorf("listed %+v", info)
			}
		default:
			t.Errorf("listed an unknown token %+v", info)
		}
	}
	var out bytes.Buffer
	if err := token.Delete(ctx, kc, []string{id, forever}, &out); err != nil {
		t.Fatal(err)
	}
	if list, _ := token.List(ctx, kc); len(list) != 0 {
		t.Errorf("tokens left after delete: %+v", list)
	}
	if err := token.Delete(ctx, kc, []string{id}, &out); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("deleting a deleted token: %v", err)
	}
	if err := token.Delete(ctx, kc, []string{"Not-A-Token"}, &out); err == nil {
		t.Error("a malformed token id was accepted")
	}
}
