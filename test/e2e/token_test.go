//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/karmada-go/karmada/internal/registration/token"
)

// karmadactl token create prints a register command whose token
// authenticates to the karmada-apiserver as a bootstrapper of Karmada's
// group, and whose hash is the fleet's CA's; token list shows it; token
// delete revokes it.
func TestBootstrapTokenLifecycle(t *testing.T) {
	ctx := context.Background()
	out, err := karmadactl("token", "create", "--ttl", "10m", "--description", "e2e", "--print-register-command")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	f := strings.Fields(strings.TrimSpace(out))
	cfg := restConfig(t, "karmada-apiserver")
	hash, err := token.CACertHash(cfg.CAData)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := strings.TrimPrefix(cfg.Host, "https://")
	if len(f) != 7 || f[0] != "karmadactl" || f[1] != "register" || f[2] != endpoint || f[3] != "--token" || f[5] != "--discovery-token-ca-cert-hash" || f[6] != hash {
		t.Fatalf("register command %q, want karmadactl register %s --token <token> --discovery-token-ca-cert-hash %s", out, endpoint, hash)
	}
	tok := f[4]
	id, _, _ := strings.Cut(tok, ".")
	t.Cleanup(func() { _, _ = karmadactl("token", "delete", id) })

	list, err := karmadactl("token", "list")
	if err != nil || !strings.Contains(list, tok) || !strings.Contains(list, "e2e") || !strings.Contains(list, token.DefaultGroup) {
		t.Errorf("token list does not show the token: %v\n%s", err, list)
	}
	as := &rest.Config{Host: cfg.Host, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, Timeout: 5 * time.Second}
	kc := kubernetes.NewForConfigOrDie(as)
	review, err := kc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the token does not authenticate: %v", err)
	}
	u := review.Status.UserInfo
	if u.Username != "system:bootstrap:"+id || !contains(u.Groups, token.DefaultGroup) {
		t.Errorf("the token authenticates as %s %v, want system:bootstrap:%s in %s", u.Username, u.Groups, id, token.DefaultGroup)
	}
	// A bootstrap token may do nothing else yet.
	if _, err := kc.CoreV1().Secrets("karmada-cluster").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a bootstrap token listing member credentials: want Forbidden, got %v", err)
	}

	// Karmada's refusals: the secret half alone, exit code 1.
	secretHalf := strings.SplitN(tok, ".", 2)[1]
	if out, err := karmadactl("token", "delete", secretHalf); exitCode(err) != 1 || !strings.Contains(out, "given token didn't match pattern") {
		t.Errorf("token delete of the secret half: exit %d, %q; want 1 and Karmada's message", exitCode(err), out)
	}
	if out, err := karmadactl("token", "delete", tok); err != nil || !strings.Contains(out, fmt.Sprintf("bootstrap token %q deleted", id)) {
		t.Fatalf("token delete: %v\n%s", err, out)
	}
	if out, err := karmadactl("token", "delete", id); exitCode(err) != 1 || !strings.Contains(out, fmt.Sprintf(`failed to delete bootstrap token %q, err: secrets "bootstrap-token-%s" not found`, id, id)) {
		t.Errorf("token delete again: exit %d, %q; want 1 and Karmada's message", exitCode(err), out)
	}
	// The API server caches a successful token authentication for 10 s.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err), nil
	})
	if err != nil {
		t.Error("the deleted token still authenticates")
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// exitCode is a command's exit code (0 when it succeeded, -1 when it did
// not run).
func exitCode(err error) int {
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
