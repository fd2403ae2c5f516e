package clusterclient

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// secretReader serves one credentials Secret and counts the reads.
type secretReader struct {
	token string
	reads int
}

func (r *secretReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.reads++
	s := obj.(*corev1.Secret)
	s.Data = map[string][]byte{SecretTokenKey: []byte(r.token), SecretCABundleKey: []byte("ca")}
	return nil
}

func (r *secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

func TestGetReusesClientsAndRereadsOnClusterChange(t *testing.T) {
	r := &secretReader{token: "t1"}
	c := NewCache(r, Options{})
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", ResourceVersion: "1"},
		Spec:       clusterv1alpha1.ClusterSpec{APIEndpoint: "https://127.0.0.1:1", InsecureSkipTLSVerification: true, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "m1"}},
	}
	first, err := c.Get(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		m, err := c.Get(context.Background(), cl)
		if err != nil || m != first {
			t.Fatalf("call %d: got other clients (%v)", i, err)
		}
	}
	if r.reads != 1 {
		t.Fatalf("credentials read %d times for 6 calls on an unchanged cluster, want 1", r.reads)
	}
	// A changed Cluster re-reads the credentials; a rotated token gives new clients.
	r.token = "t2"
	cl.ResourceVersion = "2"
	m, err := c.Get(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if r.reads != 2 || m == first || m.Config.BearerToken != "t2" {
		t.Fatalf("reads %d, token %q, same clients %v: want a re-read and new clients with t2", r.reads, m.Config.BearerToken, m == first)
	}
}
