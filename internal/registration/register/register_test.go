package register

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	jws "k8s.io/cluster-bootstrap/token/jws"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/registration/token"
	"github.com/karmada-go/karmada/internal/testenv"
)

func TestValidate(t *testing.T) {
	ok := Options{Endpoint: "127.0.0.1:31000", Token: "abcdef.0123456789abcdef", CACertHash: "sha256:" + strings.Repeat("a", 64), ClusterName: "member4"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	// The agent's gates go to its Deployment.
	gated := ok
	gated.Agent.Image, gated.Agent.FeatureGates = "agent:v1", "Failover=true,GracefulEviction=false"
	if err := gated.Validate(); err != nil {
		t.Fatal(err)
	}
	if args := AgentDeployment(gated.Agent).Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--feature-gates=Failover=true,GracefulEviction=false") {
		t.Errorf("the agent's args %q lack its gates", args)
	}
	for _, c := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Endpoint = "https://127.0.0.1:31000/" }, "host:port"},
		{func(o *Options) { o.Token = "abc" }, "--token"},
		{func(o *Options) { o.CACertHash = "" }, "--discovery-token-ca-cert-hash"},
		{func(o *Options) { o.CACertHash = "md5:abc" }, "--discovery-token-ca-cert-hash"},
		{func(o *Options) { o.ClusterName = "Member_4" }, "--cluster-name"},
		{func(o *Options) { o.Agent.FeatureGates = "Failover=true" }, "--karmada-agent-image"},
		{func(o *Options) { o.Agent.Image, o.Agent.FeatureGates = "agent:v1", "Bogus=true" }, "--feature-gates: unrecognized feature gate: Bogus"},
	} {
		o := ok
		c.change(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", o, err, c.want)
		}
	}
}

// Discovery trusts cluster-info only when the token signed it and its CA
// has the hash.
func TestDiscover(t *testing.T) {
	const id, secret = "abcdef", "0123456789abcdef"
	ca := testenv.SelfSignedCA(t)
	hash, err := token.CACertHash(ca)
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", CertificateAuthorityData: ca}
	kubeconfig, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	good, err := jws.ComputeDetachedSignature(string(kubeconfig), id, secret)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := jws.ComputeDetachedSignature(string(kubeconfig), id, "ffffffffffffffff")
	if err != nil {
		t.Fatal(err)
	}
	var served map[string]string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/kube-public/configmaps/cluster-info" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(&corev1.ConfigMap{Data: served})
	}))
	defer srv.Close()
	o := Options{Endpoint: strings.TrimPrefix(srv.URL, "https://"), Token: id + "." + secret, CACertHash: hash, ClusterName: "m", Timeout: 2 * time.Second}
	ctx := context.Background()

	served = map[string]string{"kubeconfig": string(kubeconfig), "jws-kubeconfig-" + id: good}
	if got, err := Discover(ctx, o); err != nil || string(got) != string(ca) {
		t.Fatalf("a well-signed cluster-info: CA %q, err %v", got, err)
	}
	var untrusted *untrustedError
	served["jws-kubeconfig-"+id] = forged
	if _, err := Discover(ctx, o); !errors.As(err, &untrusted) || !strings.Contains(err.Error(), "signature") {
		t.Errorf("a forged signature: %v", err)
	}
	served["jws-kubeconfig-"+id] = good
	other := o
	other.CACertHash = "sha256:" + strings.Repeat("0", 64)
	if _, err := Discover(ctx, other); !errors.As(err, &untrusted) || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("another CA hash: %v", err)
	}
	// Not signed with this token (yet): retried until the timeout, then said.
	delete(served, "jws-kubeconfig-"+id)
	if _, err := Discover(ctx, o); err == nil || !strings.Contains(err.Error(), "not signed with token abcdef") {
		t.Errorf("an unsigned cluster-info: %v", err)
	}
}

// CheckMember refuses a member holding an object of register's names that
// register did not make for this cluster, before anything is registered;
// its own objects (a second register of the same cluster) pass.
func TestCheckMemberRefusesObjectsNotOurs(t *testing.T) {
	ctx := context.Background()
	mine := map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: "edge"}
	other := map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: "core"}
	for _, tc := range []struct {
		name    string
		objs    []runtime.Object
		wantErr string
	}{
		{"empty member", nil, ""},
		{"register's own objects", []runtime.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentSecretName, Labels: mine}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: AgentName, Labels: mine}},
		}, ""},
		{"a ClusterRole of the member's own", []runtime.Object{&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: AgentName}}}, "ClusterRole karmada-agent already exists"},
		{"another cluster's Secret", []runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentSecretName, Labels: other}}}, "Secret karmada-kubeconfig already exists"},
		{"a ServiceAccount of the member's own", []runtime.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: AgentName}}}, "ServiceAccount karmada-agent already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMember(ctx, fake.NewSimpleClientset(tc.objs...), "edge", true)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "refusing to take it over") {
				t.Fatalf("error %v, want it to say %q and refuse", err, tc.wantErr)
			}
		})
	}
}
