package register

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	jws "k8s.io/cluster-bootstrap/token/jws"

	"github.com/karmada-go/karmada/internal/karmadactl/token"
	"github.com/karmada-go/karmada/internal/testenv"
)

func TestValidate(t *testing.T) {
	ok := Options{Endpoint: "127.0.0.1:31000", Token: "abcdef.0123456789abcdef", CACertHash: "sha256:" + strings.Repeat("a", 64), ClusterName: "member4"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
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
