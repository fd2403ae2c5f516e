package cluster

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// BenchmarkProxy: a GET of a 4 KiB body from a TLS member, sent directly
// (direct) and through the proxy's handler (proxied: the Cluster looked up,
// the headers rewritten, the request forwarded and the answer streamed
// back); the difference is what the proxy adds to each request, beyond the
// karmada-apiserver's own hop.
func BenchmarkProxy(b *testing.B) {
	body := make([]byte, 4096)
	member := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer member.Close()
	client := member.Client()
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			resp, err := client.Get(member.URL + "/api/v1/namespaces/default/pods")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	p := NewProxyREST(getter{cl}, dialer{srv: member})
	ctx := request.WithUser(context.Background(), &user.DefaultInfo{Name: "alice", Groups: []string{"devs", "system:authenticated"}})
	b.Run("proxied", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			h, err := p.Connect(ctx, "member1", &clusterv1alpha1.ClusterProxyOptions{Path: "/api/v1/namespaces/default/pods"}, &responder{})
			if err != nil {
				b.Fatal(err)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/default/pods", nil))
			if rec.Code != http.StatusOK || rec.Body.Len() != len(body) {
				b.Fatalf("proxied answer %d, %d bytes", rec.Code, rec.Body.Len())
			}
		}
	})
}
