//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/routes"
)

// fleetInstances are the listeners of every server of ours that the fleet
// runs, from karmada-local status; a Karmada server without rows fails.
func fleetInstances(t *testing.T, karmadaHost string) []instance {
	out, err := karmadaLocal("status", "-o", "json")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var statuses []process.ComponentStatus
	if err := json.Unmarshal([]byte(out), &statuses); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	ins := []instance{{server: "karmada-apiserver", cluster: plan.ControlPlane, listener: routes.Serving, base: karmadaHost}}
	for _, s := range statuses {
		cluster, server, _ := strings.Cut(s.Name, "/")
		listeners, ours := routes.Servers[server]
		if !ours {
			if strings.HasPrefix(server, "karmada") {
				t.Errorf("%s is a server of ours the route table does not list (internal/routes Servers)", s.Name)
			}
			continue
		}
		if len(listeners) != len(s.Ports) {
			t.Errorf("%s listens on %v; the route table knows %v", s.Name, s.Ports, listeners)
			continue
		}
		for i, l := range listeners {
			scheme := "https"
			switch l {
			case routes.Health:
				scheme = "http"
			case routes.GRPC:
				scheme = "grpc"
			}
			ins = append(ins, instance{server: server, cluster: cluster, listener: l, base: fmt.Sprintf("%s://127.0.0.1:%d", scheme, s.Ports[i])})
		}
	}
	return ins
}

// walkers are the identities of the walk.
func walkers(ctx context.Context, t *testing.T) []walker {
	state := fleet.StateDir
	read := func(p ...string) []byte {
		b, err := os.ReadFile(filepath.Join(p...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A kubeconfig's credentials, inline or in the files it names.
	fromKubeconfig := func(name string, b []byte) walker {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
		if err == nil {
			err = rest.LoadTLSFiles(cfg)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return walker{name: name, token: cfg.BearerToken, cert: cfg.CertData, key: cfg.KeyData}
	}
	fromFile := func(name string, p ...string) walker { return fromKubeconfig(name, read(p...)) }
	ws := []walker{{name: "anonymous"}, {name: "bootstrap token", token: bootstrapToken(t).BearerToken}}

	// A tenant: a service account with rights in its namespace only.
	admin := kube(t, "karmada-apiserver")
	ns := "e2e-routes-" + utilrand.String(5)
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "tenant", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws = append(ws, walker{name: "tenant", token: tr.Status.Token})

	s, err := kube(t, "member3").CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ws = append(ws, fromKubeconfig("member3's agent", s.Data[agentcert.SecretKey]))
	for _, n := range []string{"member1", "member1-impersonator"} {
		sec, err := admin.CoreV1().Secrets("karmada-cluster").Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, walker{name: "secret karmada-cluster/" + n, token: string(sec.Data["token"])})
	}
	for _, c := range []string{"karmada-controller-manager", "karmada-scheduler", "karmada-descheduler", "karmada-search", "karmada-aggregated-apiserver", "karmada-webhook", "karmada-metrics-adapter"} {
		w := fromFile(c, state, "karmada", c+".kubeconfig")
		if c == "karmada-scheduler" || c == "karmada-descheduler" {
			pair, err := tls.X509KeyPair(read(state, "estimator", "pki", c+"-client.crt"), read(state, "estimator", "pki", c+"-client.key"))
			if err != nil {
				t.Fatal(err)
			}
			w.grpc = &pair
		}
		ws = append(ws, w)
	}
	ws = append(ws, fromFile("administrator", state, "karmada", "admin.kubeconfig"),
		fromFile("member1's administrator", state, "member1", "admin.kubeconfig"))
	for _, w := range ws {
		if w.token == "" && w.cert == nil && w.name != "anonymous" {
			t.Fatalf("%s has no credential", w.name)
		}
	}
	return ws
}

// memberAdmin is a token of a service account bound to cluster-admin in
// member (a component's metrics there may take tokens only), removed with
// the test.
func memberAdmin(ctx context.Context, t *testing.T, member string) walker {
	t.Helper()
	kc := kube(t, member)
	name := "e2e-route-probe"
	if _, err := kc.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: "default"}}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = kc.CoreV1().ServiceAccounts("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	tr, err := kc.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return walker{name: member + "'s administrator", token: tr.Status.Token}
}
